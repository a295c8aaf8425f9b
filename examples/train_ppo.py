#!/usr/bin/env python3
"""PPO on any polis scenario: one file, one shared policy for every agent, action masking.

    python3 examples/train_ppo.py contract --agent-steps 2e6
    python3 examples/train_ppo.py negotiation --envs 32 --minutes 5 --out runs/negotiation
    python3 examples/train_ppo.py exploration --envs 4 --minutes 10

The recipe (in the spirit of CleanRL's single-file PPO):

- ``polis.vector_env(scenario, num_envs=E, flatten=True, metrics=True)``: E games stepped
  in C; every agent of every game is one row of the batch, and all rows share one actor
  and one critic (parameter sharing). Observations are the flat float32 vectors of
  ``flatten=True``. Two encoders (``--encoder``): ``mlp``, two tanh layers over the whole
  vector normalised by a running mean and variance (separate actor and critic), and
  ``conv``, for games with map-like fields (a ``[C, H, W]`` field with H, W >= 8, such
  as Exploration's 32 x 20 x 20 egocentric ``grid``): each such field, scaled by
  sign(x) log(1 + |x|), goes through a small strided CNN, the other fields (normalised)
  through a tanh layer, and one trunk feeds both heads. ``auto`` (the default) picks
  ``conv`` when the scenario has such a field.
- Rewards are divided by a running standard deviation of the discounted return
  (``--norm-reward``, on by default), so games whose items are worth 1 or 1000 train with
  the same value-loss scale; logged returns are the game's own.
- Action masking: the logits of actions the mask forbids are set to -1e8, so the policy
  never picks them and their probability is 0 in the ratio and the entropy.
- Auto-reset is Gymnasium's next-step mode: the step after an episode's last one resets
  the game and ignores its actions, so those transitions (and those of agents already done
  while others play on) are masked out of the loss. Truncated episodes bootstrap from the
  value of the final observation; terminated ones do not.
- GAE(lambda), clipped surrogate, clipped value loss, entropy bonus, Adam, gradient-norm
  clipping, minibatches over the rollout's rows.

Before training it measures the random policy (uniform over legal actions) on the same
envs. It writes ``<out>/log.csv`` (one row per update), ``<out>/summary.json`` (arguments,
random baseline, final figures, wall time per million agent-steps) and
``<out>/curve.png`` (mean episode return and the metrics plugin's normalised reward
against agent-steps, with the random level). Needs python3-torch and python3-numpy;
matplotlib (the plot) and tqdm (the progress bar) are used when installed. Debian's
python3-torch multiplies matrices with whatever ``libblas.so.3`` is installed: with the
reference BLAS alone it is about ten times slower than with OpenBLAS
(``apt-get install libopenblas0``).
"""

import argparse
import csv
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import polis
except ImportError:  # running from the source tree
    sys.path.insert(0, os.path.join(HERE, "..", "sdk", "python"))
    import polis

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:
    print("train_ppo.py needs PyTorch (Debian: apt-get install python3-torch)")
    sys.exit(77)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", help="a scenario name (contract) or a JSON file")
    ap.add_argument("--agent-steps", type=float, default=1e6,
                    help="training budget in agent-steps (default 1e6)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this much wall time as well")
    ap.add_argument("--envs", type=int, default=16, help="games stepped together (16)")
    ap.add_argument("--threads", type=int, default=1, help="engine threads (1)")
    ap.add_argument("--rollout", type=int, default=128, help="steps per rollout (128)")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--minibatches", type=int, default=4)
    ap.add_argument("--lr", type=float, default=2.5e-4)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lam", type=float, default=0.95)
    ap.add_argument("--clip", type=float, default=0.2)
    ap.add_argument("--ent", type=float, default=0.01, help="entropy coefficient")
    ap.add_argument("--vf", type=float, default=0.5, help="value-loss coefficient")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--encoder", choices=("auto", "mlp", "conv"), default="auto",
                    help="mlp, conv (a CNN over map-like fields) or auto (conv when the "
                         "scenario has a [C, H, W] field with H, W >= 8)")
    ap.add_argument("--crop", type=int, default=9,
                    help="conv: keep the central KxK cells of each map-like field "
                         "(egocentric maps: the agent's surroundings); 0: the whole map (9)")
    ap.add_argument("--norm-reward", type=int, choices=(0, 1), default=1,
                    help="divide rewards by a running std of the discounted return (1)")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="PyTorch threads (1: small networks gain nothing from more)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--random-episodes", type=int, default=2,
                    help="episodes per game of the random baseline (2; 0: skip)")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=JSON",
                    help="scenario override, e.g. --set max_steps=60 (repeatable)")
    ap.add_argument("--out", default=None, help="output directory (runs/<scenario>)")
    ap.add_argument("--baseline", action="append", default=[], metavar="LABEL=RETURN[:NORM]",
                    help="another policy's mean return per agent (and normalised reward), "
                         "drawn on the curve, e.g. --baseline scripted=11.5:0.23 (repeatable)")
    ap.add_argument("--replot", action="store_true",
                    help="train nothing: redraw <out>/curve.png from <out>/log.csv and "
                         "summary.json (with the --baseline lines given now)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the log, the summary (and with matplotlib the plot) "
                         "were written with finite losses (the test suite's smoke run)")
    return ap.parse_args(argv)


def overrides_of(pairs):
    out = {}
    for p in pairs:
        key, sep, val = p.partition("=")
        if not sep:
            raise SystemExit(f"--set {p!r}: expected PATH=JSON")
        try:
            out[key] = json.loads(val)
        except ValueError:
            out[key] = val  # a bare string
    return out


class RunningNorm:
    """Running mean and variance of the observations (per feature), for normalising."""

    def __init__(self, dim):
        self.mean = np.zeros(dim, np.float64)
        self.var = np.ones(dim, np.float64)
        self.count = 1e-4

    def update(self, x):
        m, v, n = x.mean(0), x.var(0), x.shape[0]
        delta, tot = m - self.mean, self.count + n
        self.mean += delta * n / tot
        self.var = (self.var * self.count + v * n + delta ** 2 * self.count * n / tot) / tot
        self.count = tot

    def __call__(self, x):
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -10, 10).astype(np.float32)


class RewardNorm:
    """Rewards divided by the running std of each row's discounted return (as Gymnasium's
    NormalizeReward does), so the value loss has the same scale in every game."""

    def __init__(self, rows, gamma):
        self.ret = np.zeros(rows, np.float64)
        self.stats = RunningNorm(1)
        self.gamma = gamma

    def __call__(self, rew, done):
        self.ret = self.ret * self.gamma + rew
        self.stats.update(self.ret[:, None])
        self.ret[done] = 0.0
        return (rew / np.sqrt(self.stats.var[0] + 1e-8)).astype(np.float32)


def map_fields(v):
    """The flat layout's map-like fields: (offset, C, H, W) of every [C, H, W] field with H
    and W at least 8, which the conv encoder reads as images."""
    shapes = {f.name: f.shape for f in v.obs_fields}
    out = []
    for name, off, _ in v.layout.parts:
        shape = shapes[name]
        if len(shape) == 3 and shape[1] >= 8 and shape[2] >= 8:
            out.append((off,) + tuple(shape))
    return out


class Prep:
    """Raw flat observations -> network input. Without map-like fields (the mlp encoder):
    every feature normalised by a running mean and variance. With them (conv): the central
    ``crop`` x ``crop`` cells of each (maps are egocentric, the agent at [H/2][W/2], as
    society's map and window views are; 0 keeps the whole map), scaled by
    sign(x) log(1 + |x|) (counts of 0 to thousands, mostly 0), first, then the other
    features, normalised."""

    def __init__(self, dim, maps, crop):
        self.maps, parts, in_map, out = [], [], np.zeros(dim, bool), 0
        for off, c, h, w in maps:
            kh, kw = (min(crop, h), min(crop, w)) if crop else (h, w)
            r0, c0 = h // 2 - kh // 2, w // 2 - kw // 2
            cells = (off + np.arange(c)[:, None, None] * h * w
                     + (r0 + np.arange(kh))[None, :, None] * w + (c0 + np.arange(kw)))
            parts.append(cells.reshape(-1))
            in_map[off:off + c * h * w] = True
            self.maps.append((out, c, kh, kw))
            out += c * kh * kw
        self.n_map = out
        self.idx = np.concatenate(parts + [np.flatnonzero(~in_map)]) if maps else None
        self.dim = len(self.idx) if maps else dim
        self.norm = RunningNorm(self.dim - self.n_map)

    def __call__(self, x, update=True):
        if self.idx is None:
            if update:
                self.norm.update(x)
            return self.norm(x)
        y = x[:, self.idx]
        m, rest = y[:, :self.n_map], y[:, self.n_map:]
        np.copysign(np.log1p(np.abs(m)), m, out=m)
        if update:
            self.norm.update(rest)
        y[:, self.n_map:] = self.norm(rest)
        return y


def layer(i, o, std=np.sqrt(2), ks=None, stride=1):
    lin = nn.Linear(i, o) if ks is None else nn.Conv2d(i, o, ks, stride, padding=ks // 2)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """The shared actor and critic: two tanh layers each."""

    def __init__(self, obs_dim, n_actions, hidden):
        super().__init__()
        self.critic = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(),
                                    layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(),
                                   layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, n_actions, 0.01))

    def value(self, x):
        return self.critic(x).squeeze(-1)

    def act(self, x, mask, action=None):
        logits = self.actor(x).masked_fill(mask == 0, -1e8)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        # entropy over the legal actions only (masked ones have probability 0)
        p = dist.probs
        ent = -(p * torch.log(p.clamp_min(1e-12))).sum(-1)
        return action, dist.log_prob(action), ent, self.value(x)


class ConvAgent(Agent):
    """One trunk shared by actor and critic: each map-like field through two 3x3
    convolutions (the second strided), the other features through a tanh layer, then a ReLU
    layer of ``hidden`` units and the two heads. The input is ``Prep``'s: the maps' cells
    first, then the other features."""

    def __init__(self, n_actions, hidden, maps, dim):
        nn.Module.__init__(self)
        self.maps, self.n_map = maps, maps[-1][0] + np.prod(maps[-1][1:])
        self.cnns = nn.ModuleList()
        feat = 0
        for _, c, h, w in maps:
            cnn = nn.Sequential(layer(c, 16, ks=3), nn.ReLU(),
                                layer(16, 32, ks=3, stride=2), nn.ReLU(), nn.Flatten())
            with torch.no_grad():
                feat += cnn(torch.zeros(1, c, h, w)).shape[1]
            self.cnns.append(cnn)
        rest = dim - self.n_map
        self.vec = nn.Sequential(layer(rest, 64), nn.Tanh()) if rest else None
        feat += 64 if rest else 0
        self.trunk = nn.Sequential(layer(feat, hidden), nn.ReLU())
        self.pi = layer(hidden, n_actions, 0.01)
        self.v = layer(hidden, 1, 1.0)

    def features(self, x):
        parts = [cnn(x[:, off:off + c * h * w].reshape(-1, c, h, w).contiguous())
                 for cnn, (off, c, h, w) in zip(self.cnns, self.maps)]
        if self.vec is not None:
            parts.append(self.vec(x[:, self.n_map:]))
        return self.trunk(torch.cat(parts, 1))

    def value(self, x):
        return self.v(self.features(x)).squeeze(-1)

    def act(self, x, mask, action=None):
        h = self.features(x)
        logits = self.pi(h).masked_fill(mask == 0, -1e8)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        p = dist.probs
        ent = -(p * torch.log(p.clamp_min(1e-12))).sum(-1)
        return action, dist.log_prob(action), ent, self.v(h).squeeze(-1)


class EpisodeLog:
    """Returns and the metrics plugin's figures of the episodes that ended."""

    def __init__(self):
        self.returns, self.norm = [], []

    def take(self, infos):
        ended = infos["_episode"]
        if ended.any():
            self.returns.extend(infos["episode"]["r"][ended].tolist())
        if "_metrics" in infos and infos["_metrics"].any():
            for k in np.flatnonzero(infos["_metrics"]):
                v = infos["metrics"][k].get("total_reward_normalised")
                if v is not None:
                    self.norm.append(float(v))

    def drain(self):
        r, n = self.returns, self.norm
        self.returns, self.norm = [], []
        return (float(np.mean(r)) if r else None, float(np.mean(n)) if n else None, len(r))


def random_baseline(make_env, episodes, seed):
    """Mean per-agent return and normalised reward of the uniform legal policy."""
    v = make_env()
    rng = np.random.default_rng(seed)
    log = EpisodeLog()
    obs, infos = v.reset(seed=seed)
    games = 0
    score = np.empty(v.masks.shape, np.float32)
    while games < episodes * v.num_envs:
        np.add(v.masks, rng.random(v.masks.shape, dtype=np.float32), out=score)
        obs, _, _, _, infos = v.step(score.argmax(1))
        log.take(infos)
        if "_metrics" in infos:
            games += int(infos["_metrics"].sum())
        else:
            games += int(infos["_episode"].sum()) // max(1, v.agents_per_env)
    v.close()
    return log.drain()


def baselines_of(pairs):
    out = {}
    for p in pairs:
        label, sep, vals = p.partition("=")
        ret, _, norm = vals.partition(":")
        try:
            out[label] = {"return": float(ret),
                          "total_reward_normalised": float(norm) if norm else None}
        except ValueError:
            sep = ""
        if not sep or not label:
            raise SystemExit(f"--baseline {p!r}: expected LABEL=RETURN[:NORM]")
    return out


def replot(out, name, baselines):
    """Redraws <out>/curve.png from a finished run's log.csv and summary.json."""
    try:
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "log.csv")) as f:
            history = [{k: (float(v) if v not in ("", None) else None) for k, v in r.items()}
                       for r in csv.DictReader(f)]
    except (OSError, ValueError) as e:
        raise SystemExit(f"--replot: {e}")
    summary["baselines"] = {**summary.get("baselines", {}), **baselines}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    plot(history, summary, os.path.join(out, "curve.png"), name)
    return 0


def main(argv=None):
    args = parse_args(argv)
    baselines = baselines_of(args.baseline)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    overrides = overrides_of(args.set)
    name = os.path.splitext(os.path.basename(args.scenario))[0]
    out = args.out or os.path.join("runs", name)
    if args.replot:
        return replot(out, name, baselines)
    os.makedirs(out, exist_ok=True)

    def make_env():
        return polis.vector_env(args.scenario, num_envs=args.envs, threads=args.threads,
                                flatten=True, metrics=True, overrides=overrides)

    t_start = time.time()
    if args.random_episodes:
        rand_ret, rand_norm, _ = random_baseline(make_env, args.random_episodes, args.seed + 7)
    else:
        rand_ret = rand_norm = None
    print(f"{name}: random policy: return {rand_ret}, normalised reward {rand_norm}",
          flush=True)

    v = make_env()
    rows, T = v.num_rows, args.rollout
    obs_dim, n_actions = v.layout.dim, v.n_actions
    maps = map_fields(v) if args.encoder != "mlp" else []
    if args.encoder == "conv" and not maps:
        raise SystemExit(f"{name}: --encoder conv needs an observation field [C, H, W] with "
                         f"H, W >= 8; the fields are "
                         + ", ".join(f"{f.name} {list(f.shape)}" for f in v.obs_fields))
    prep = Prep(obs_dim, maps, args.crop)
    obs_dim = prep.dim
    if maps:
        agent = ConvAgent(n_actions, args.hidden, prep.maps, obs_dim)
    else:
        agent = Agent(obs_dim, n_actions, args.hidden)
    encoder = "conv" if maps else "mlp"
    print(f"{name}: {rows} rows, {v.layout.dim} observation values ({obs_dim} used), "
          f"{n_actions} actions, "
          f"{encoder} encoder, {sum(p.numel() for p in agent.parameters()):,} parameters",
          flush=True)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    rnorm = RewardNorm(rows, args.gamma) if args.norm_reward else None

    # rollout storage: [T, rows]
    b_obs = np.zeros((T, rows, obs_dim), np.float32)
    b_mask = np.zeros((T, rows, n_actions), np.int8)
    b_act = np.zeros((T, rows), np.int64)
    b_logp = np.zeros((T, rows), np.float32)
    b_val = np.zeros((T + 1, rows), np.float32)
    b_rew = np.zeros((T, rows), np.float32)
    b_term = np.zeros((T, rows), np.float32)
    b_done = np.zeros((T, rows), np.float32)
    b_valid = np.zeros((T, rows), np.float32)

    obs, infos = v.reset(seed=args.seed)
    prev_done = np.zeros(rows, bool)
    log = EpisodeLog()
    budget = int(args.agent_steps)
    updates = max(1, budget // (T * rows))
    bar = None
    if not args.quiet:
        try:
            from tqdm import tqdm
            bar = tqdm(total=updates * T * rows, unit="agent-step", unit_scale=True,
                       desc=name, dynamic_ncols=True)
        except ImportError:
            pass
    csv_path = os.path.join(out, "log.csv")
    fields = ["update", "agent_steps", "seconds", "return", "total_reward_normalised",
              "episodes", "policy_loss", "value_loss", "entropy"]
    f_csv = open(csv_path, "w", newline="")
    writer = csv.DictWriter(f_csv, fieldnames=fields)
    writer.writeheader()
    history = []
    t_train = time.time()
    steps_done = 0
    last = {}
    for update in range(1, updates + 1):
        if args.minutes and time.time() - t_train > args.minutes * 60:
            break
        # ---- rollout --------------------------------------------------------------------
        for t in range(T):
            xn = prep(obs["observation"])
            b_obs[t] = xn
            b_mask[t] = obs["action_mask"]
            with torch.no_grad():
                a, logp, _, val = agent.act(torch.from_numpy(xn),
                                            torch.from_numpy(b_mask[t]))
            b_act[t] = a.numpy()
            b_logp[t] = logp.numpy()
            b_val[t] = val.numpy()
            # rows already done (or whose game resets in this step) take no real action
            b_valid[t] = ~prev_done
            obs, rew, term, trunc, infos = v.step(b_act[t])
            done = term | trunc
            b_rew[t] = rnorm(rew, done) if rnorm is not None else rew
            b_term[t] = term
            b_done[t] = done
            prev_done = done.copy()
            log.take(infos)
        with torch.no_grad():
            x = torch.from_numpy(prep(obs["observation"], update=False))
            b_val[T] = agent.value(x).numpy()
        steps_done += T * rows
        # ---- GAE: the value after step t is that of the observation it returned (the final
        # one when the episode ended there); terminations do not bootstrap ----------------
        adv = np.zeros((T, rows), np.float32)
        last_gae = np.zeros(rows, np.float32)
        for t in reversed(range(T)):
            delta = b_rew[t] + args.gamma * b_val[t + 1] * (1.0 - b_term[t]) - b_val[t]
            last_gae = delta + args.gamma * args.lam * (1.0 - b_done[t]) * last_gae
            last_gae *= b_valid[t]
            adv[t] = last_gae
        ret = adv + b_val[:T]
        # ---- update ------------------------------------------------------------------------
        # Every row of the rollout is in the batch, weighted by whether it holds a
        # transition: minibatches keep one shape (PyTorch's CPU convolutions prepare
        # themselves per shape) and nothing is gathered up front.
        o = torch.from_numpy(b_obs.reshape(-1, obs_dim))
        m = torch.from_numpy(b_mask.reshape(-1, n_actions))
        a = torch.from_numpy(b_act.reshape(-1))
        lp_old = torch.from_numpy(b_logp.reshape(-1))
        A = torch.from_numpy(adv.reshape(-1))
        R = torch.from_numpy(ret.reshape(-1))
        V_old = torch.from_numpy(b_val[:T].reshape(-1))
        W = torch.from_numpy(b_valid.reshape(-1))
        n = T * rows
        mb = max(1, n // args.minibatches)
        for _ in range(args.epochs):
            perm = torch.randperm(n)
            for s in range(0, n - mb + 1, mb):
                j = perm[s:s + mb]
                w = W[j]
                nw = w.sum().clamp_min(1.0)
                _, lp, ent, val = agent.act(o[j], m[j], a[j])
                ratio = torch.exp(lp - lp_old[j])
                aj = A[j]
                mu = (aj * w).sum() / nw
                sd = (((aj - mu) ** 2 * w).sum() / nw).sqrt()
                aj = (aj - mu) / (sd + 1e-8)
                pg = (torch.max(-aj * ratio,
                                -aj * torch.clamp(ratio, 1 - args.clip, 1 + args.clip))
                      * w).sum() / nw
                v_clip = V_old[j] + torch.clamp(val - V_old[j], -args.clip, args.clip)
                vl = 0.5 * (torch.max((val - R[j]) ** 2, (v_clip - R[j]) ** 2) * w).sum() / nw
                ent = (ent * w).sum() / nw
                loss = pg + args.vf * vl - args.ent * ent
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        mean_ret, mean_norm, episodes = log.drain()
        if mean_ret is None:
            mean_ret, mean_norm = last.get("return"), last.get("total_reward_normalised")
        row = {"update": update, "agent_steps": steps_done,
               "seconds": round(time.time() - t_train, 2), "return": mean_ret,
               "total_reward_normalised": mean_norm, "episodes": episodes,
               "policy_loss": float(pg), "value_loss": float(vl),
               "entropy": float(ent)}
        last = row
        writer.writerow(row)
        f_csv.flush()
        history.append(row)
        if bar is not None:
            bar.update(T * rows)
            bar.set_postfix(ret=f"{mean_ret:.2f}" if mean_ret is not None else "-",
                            norm=f"{mean_norm:.3f}" if mean_norm is not None else "-")
    if bar is not None:
        bar.close()
    f_csv.close()
    v.close()
    wall = time.time() - t_train
    final = [r for r in history[-max(1, len(history) // 10):] if r["return"] is not None]
    summary = {
        "scenario": args.scenario, "args": vars(args), "rows": rows, "encoder": encoder,
        "agent_steps": steps_done, "train_seconds": round(wall, 1),
        "seconds_per_million_agent_steps": round(wall / max(steps_done, 1) * 1e6, 1),
        "random": {"return": rand_ret, "total_reward_normalised": rand_norm},
        "baselines": baselines,
        "final": {
            "return": float(np.mean([r["return"] for r in final])) if final else None,
            "total_reward_normalised": (
                float(np.mean([r["total_reward_normalised"] for r in final
                               if r["total_reward_normalised"] is not None]))
                if any(r["total_reward_normalised"] is not None for r in final) else None)},
        "total_seconds": round(time.time() - t_start, 1),
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"{name}: {steps_done:,} agent-steps in {wall:.0f} s "
          f"({summary['seconds_per_million_agent_steps']} s per million); final return "
          f"{summary['final']['return']}, normalised {summary['final']['total_reward_normalised']}"
          f" (random {rand_ret}, {rand_norm}); {csv_path}")
    plotted = plot(history, summary, os.path.join(out, "curve.png"), name)
    if args.check:
        return check(out, history, plotted, args, maps, prep)
    return 0


def check(out, history, plotted, args, maps, prep):
    """The smoke run's verdict: every output written, the losses finite, the encoder asked
    for, and the conv input holding each map's central cells, scaled."""
    problems = []
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    if args.encoder != "auto" and summary["encoder"] != args.encoder:
        problems.append(f"summary.json: encoder {summary['encoder']}, asked {args.encoder}")
    if maps:
        x = np.arange(-7.0, prep.norm.mean.size + sum(c * h * w for _, c, h, w in maps) - 7,
                      dtype=np.float32)
        x = np.stack([x, -x])
        y = prep(x, update=False)
        for (off, c, h, w), (o2, _, kh, kw) in zip(maps, prep.maps):
            r0, c0 = h // 2 - kh // 2, w // 2 - kw // 2
            want = x[:, off:off + c * h * w].reshape(2, c, h, w)[:, :, r0:r0 + kh, c0:c0 + kw]
            got = y[:, o2:o2 + c * kh * kw].reshape(2, c, kh, kw)
            if not np.allclose(got, np.sign(want) * np.log1p(np.abs(want)), atol=1e-6):
                problems.append(f"the conv input of the map at offset {off} is not its "
                                f"central {kh}x{kw} cells scaled")
    with open(os.path.join(out, "log.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != len(history) or not rows:
        problems.append(f"log.csv has {len(rows)} rows for {len(history)} updates")
    for r in rows:
        for k in ("policy_loss", "value_loss", "entropy"):
            if not np.isfinite(float(r[k])):
                problems.append(f"update {r['update']}: {k} is {r[k]}")
    if summary["agent_steps"] <= 0:
        problems.append("summary.json: no agent-steps")
    if plotted and not os.path.getsize(os.path.join(out, "curve.png")):
        problems.append("curve.png is empty")
    for p in problems:
        print("check failed:", p)
    print("check:", "ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


def plot(history, summary, path, name):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (apt-get install python3-matplotlib)")
        return False
    xs = [r["agent_steps"] for r in history]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, key, label in ((axes[0], "return", "mean episode return per agent"),
                           (axes[1], "total_reward_normalised",
                            "normalised reward (total_reward_normalised)")):
        ys = [r[key] if r[key] is not None else np.nan for r in history]
        if key != "return" and all(np.isnan(y) for y in ys):
            ax.text(0.5, 0.5, "no oracle in this scenario:\nno normalised reward",
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(label)
            continue
        ax.plot(xs, ys, label="PPO")
        styles = ("--", ":", "-.")
        others = [("random", summary["random"])] + list(summary.get("baselines", {}).items())
        for i, (who, b) in enumerate(others):
            if b.get(key) is not None:
                ax.axhline(b[key], color=f"C{i + 1}", linestyle=styles[i % 3], label=who)
        ax.set_xlabel("agent-steps")
        ax.set_title(label)
        ax.legend()
    fig.suptitle(f"{name}: PPO, {summary.get('encoder', 'mlp')} encoder")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"plot: {path}")
    return True


if __name__ == "__main__":
    sys.exit(main())
