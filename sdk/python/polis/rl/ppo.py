"""PPO on any polis scenario: one policy shared by every agent, action masking, checkpoints,
curves, recorded episodes of the trained policy, and optionally a curriculum.

    python3 -m polis.rl.ppo contract --agent-steps 1e6 --out runs/contract
    python3 -m polis.rl.ppo contract --curriculum rulesets/contract/curricula/contract_curriculum.json
    python3 examples/train_ppo.py contract --minutes 5          # the same trainer

The recipe (in the spirit of CleanRL's single-file PPO):

- ``polis.vector_env(scenario, num_envs=E, flatten=True, metrics=True)``: E games stepped
  in C; every agent of every game is one row of the batch, and all rows share one actor and
  one critic (parameter sharing). With ``--curriculum FILE`` (or ``--tasks FILE``, a task
  pool under a learning-progress sampler) the envs are ``polis.rl.tasks.TaskVectorEnv``'s,
  each drawing its next task from the curriculum at its reset (docs/curricula.md).
- Encoders (``--encoder``): ``mlp`` and ``conv`` (``polis.rl.nets``); ``auto`` picks conv when
  the scenario has a map-like ``[C, H, W]`` field.
- Algorithms (``--algo``; AdaSociety's baselines, docs/baselines.md): ``ppo`` (feed-forward
  actor and critic), ``recppo`` (an LSTM after the encoder; its state is carried across the
  steps of each row, zeroed at the first observation of each episode, and trained by
  truncated backpropagation through time over ``--bptt``-step pieces of the rollout, each
  started from the state the rollout had there) and ``mappo`` (decentralised actors, one
  critic over the game's global input: every agent's observation and, with
  ``--critic-actions 1``, the other agents' actions of the step; used in training only).
- Rewards divided by a running std of the discounted return (``--norm-reward``); masked
  logits; next-step auto-reset handled by weighting out the transitions that hold none;
  GAE(lambda), clipped surrogate and value losses, entropy bonus, Adam, gradient clipping.

Outputs under ``--out`` (default ``runs/<scenario>``): ``log.jsonl`` (one JSON object per
update: agent-steps, seconds, mean episode return per agent, the paper's normalised reward,
losses, entropy, and with a curriculum its stage), ``log.csv`` (the same columns),
``summary.json``, ``curve.png``, ``policy.pt`` (the final checkpoint,
``polis.rl.checkpoint``; ``--save-every N`` also keeps ``checkpoints/policy-<steps>.pt``) and,
with ``--record-episodes K``, ``episodes.jsonl.gz``: K episodes of the trained policy recorded
(``polis view`` shows them, ``polis replay --verify`` checks them).

``--resume CHECKPOINT`` continues the run that saved it (its network, normalisers, Adam's
state, agent-step and update counts, and the log in ``--out``, cut back to the checkpoint):
long budgets can be trained in capped pieces (``--minutes``); the games restart from reset.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:  # the caller says how to install it
    torch = None

import polis
from . import checkpoint as ckpt
from . import nets
from . import plot as _plot
from .policy import PolicyError, spec_of

# --algo -> the network's architecture (polis.rl.nets.build)
ARCH_OF = {"ppo": "ff", "recppo": "lstm", "mappo": "central"}

LOG_FIELDS = ["update", "agent_steps", "seconds", "return", "total_reward_normalised",
              "episodes", "policy_loss", "value_loss", "entropy", "stage"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="polis.rl.ppo", description=__doc__.split("\n")[0])
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
    ap.add_argument("--algo", choices=("ppo", "recppo", "mappo"), default="ppo",
                    help="ppo (feed-forward), recppo (an LSTM policy) or mappo (a central "
                         "critic) (ppo)")
    ap.add_argument("--bptt", type=int, default=16,
                    help="recppo: steps per backpropagation-through-time piece; divides "
                         "--rollout (16)")
    ap.add_argument("--critic-actions", type=int, choices=(0, 1), default=1,
                    help="mappo: the central critic also reads the other agents' actions (1)")
    ap.add_argument("--encoder", choices=("auto", "mlp", "conv"), default="auto",
                    help="mlp, conv (a CNN over map-like fields) or auto (conv when the "
                         "scenario has a [C, H, W] field with H, W >= 8)")
    ap.add_argument("--crop", type=int, default=9,
                    help="conv: keep the central KxK cells of each map-like field; 0: all (9)")
    ap.add_argument("--norm-reward", type=int, choices=(0, 1), default=1,
                    help="divide rewards by a running std of the discounted return (1)")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="PyTorch threads (1: small networks gain nothing from more)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--random-episodes", type=int, default=2,
                    help="episodes per game of the random baseline (2; 0: skip)")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=JSON",
                    help="scenario override, e.g. --set max_steps=60 (repeatable)")
    ap.add_argument("--seat", action="append", default=[], metavar="AGENT=POLICY",
                    help="AGENT is played by a policy the scenario registers (scripted ...), "
                         "not trained; adds to the scenario's \"seats\" (repeatable)")
    ap.add_argument("--curriculum", default=None, metavar="FILE",
                    help="a curriculum file (docs/curricula.md): stages of tasks with "
                         "promotion rules; each env draws its task at its reset")
    ap.add_argument("--tasks", default=None, metavar="FILE",
                    help="a task pool file sampled by learning progress (docs/curricula.md)")
    ap.add_argument("--init", default=None, metavar="CHECKPOINT",
                    help="start from this checkpoint's network and normaliser")
    ap.add_argument("--resume", default=None, metavar="CHECKPOINT",
                    help="continue the run that saved this checkpoint: its network, "
                         "normalisers, Adam's state and agent-step count; --agent-steps is "
                         "the run's total; the log in --out is continued")
    ap.add_argument("--out", default=None, help="output directory (runs/<scenario>)")
    ap.add_argument("--save-every", type=int, default=0, metavar="N",
                    help="also keep checkpoints/policy-<steps>.pt every N updates (0: only "
                         "the final policy.pt)")
    ap.add_argument("--record-episodes", type=int, default=0, metavar="K",
                    help="record K episodes of the trained policy to episodes.jsonl.gz")
    ap.add_argument("--baseline", action="append", default=[], metavar="LABEL=RETURN[:NORM]",
                    help="another policy's mean return per agent (and normalised reward), "
                         "drawn on the curve, e.g. --baseline scripted=11.5:0.23 (repeatable)")
    ap.add_argument("--replot", action="store_true",
                    help="train nothing: redraw <out>/curve.png from its log and summary")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the log, the summary, the checkpoint (and with "
                         "matplotlib the plot) were written with finite losses")
    args = ap.parse_args(argv)
    if args.curriculum and args.tasks:
        ap.error("--curriculum and --tasks exclude each other")
    if args.resume and args.init:
        ap.error("--resume and --init exclude each other")
    if args.resume and (args.curriculum or args.tasks):
        ap.error("--resume continues runs without a curriculum or task pool")
    if args.seat and (args.curriculum or args.tasks):
        ap.error("--seat plays seats of one scenario; not with --curriculum or --tasks")
    if args.algo == "recppo" and (args.bptt < 1 or args.rollout % args.bptt):
        ap.error(f"--bptt {args.bptt} must be positive and divide --rollout {args.rollout}")
    return args


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


class EpisodeLog:
    """Returns and the metrics plugin's figures of the episodes that ended; ``rows``: the rows
    whose returns count (None: all)."""

    def __init__(self, rows=None):
        self.returns, self.norm = [], []
        self.rows = rows

    def take(self, infos):
        ended = infos["_episode"]
        if ended.any():
            r = infos["episode"]["r"]
            if self.rows is not None:
                ended, r = ended[self.rows], r[self.rows]
            self.returns.extend(r[ended].tolist())
        if "_metrics" in infos and infos["_metrics"].any():
            for k in np.flatnonzero(infos["_metrics"]):
                v = infos["metrics"][k].get("total_reward_normalised")
                if v is not None:
                    self.norm.append(float(v))

    def drain(self):
        r, n = self.returns, self.norm
        self.returns, self.norm = [], []
        return (float(np.mean(r)) if r else None, float(np.mean(n)) if n else None, len(r))


def random_baseline(v, episodes, seed):
    """Mean per-agent return and normalised reward of the uniform legal policy."""
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
    return log.drain()


def scenario_info(scenario, overrides):
    """The checkpoint's ``scenario`` entry: name, file, its text, the overrides."""
    path = scenario
    if isinstance(scenario, str) and not os.path.exists(scenario) and "/" not in scenario:
        try:
            path = polis.find_scenario(scenario)
        except polis.PolisError:
            path = None
    text = None
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        path = os.path.abspath(path)
    return {"name": os.path.splitext(os.path.basename(str(scenario)))[0], "file": path,
            "text": text, "overrides": overrides}


def make_env(args, overrides, source=None):
    if source is None:
        return polis.vector_env(args.scenario, num_envs=args.envs, threads=args.threads,
                                flatten=True, metrics=True, overrides=overrides)
    from .tasks import TaskVectorEnv
    return TaskVectorEnv(args.scenario, source, num_envs=args.envs, overrides=overrides,
                         metrics=True)


def task_source(args):
    from . import curriculum as cur
    if args.curriculum:
        return cur.load_curriculum(args.curriculum)
    if args.tasks:
        return cur.load_task_pool(args.tasks)
    return None


def train(args, log_fn=print):
    """Trains as the arguments say; returns the summary dict (also in summary.json)."""
    if torch is None:
        raise SystemExit("polis.rl.ppo needs PyTorch (Debian: apt-get install python3-torch)")
    baselines = baselines_of(args.baseline)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    overrides = overrides_of(args.set)
    name = os.path.splitext(os.path.basename(args.scenario))[0]
    out = args.out or os.path.join("runs", name)
    os.makedirs(out, exist_ok=True)
    source = task_source(args)

    t_start = time.time()
    prior = {}  # a resumed run's summary so far (its random level, earlier resumptions)
    if args.resume:
        try:
            with open(os.path.join(out, "summary.json")) as f:
                prior = json.load(f)
        except (OSError, ValueError):
            prior = {}
    if prior.get("random"):
        rand_ret = prior["random"].get("return")
        rand_norm = prior["random"].get("total_reward_normalised")
    elif args.random_episodes:
        rv = make_env(args, overrides, task_source(args))
        rand_ret, rand_norm, _ = random_baseline(rv, args.random_episodes, args.seed + 7)
        rv.close()
    else:
        rand_ret = rand_norm = None
    log_fn(f"{name}: random policy: return {rand_ret}, normalised reward {rand_norm}")

    v = make_env(args, overrides, source)
    spec = spec_of(v)
    # the scenario's "seats" and --seat: agents played by a policy beside the learners; only
    # the other rows (learn) are trained (polis.rl.scripted)
    seats = None
    if source is None:
        from .scripted import ScriptedSeats, scenario_seats, seats_of
        try:
            wanted = {**scenario_seats(args.scenario, overrides), **seats_of(args.seat)}
            seats = ScriptedSeats(v, wanted) if wanted else None
        except ValueError as e:
            v.close()
            raise SystemExit(f"{name}: {e}")
    learn = seats.learn if seats is not None else slice(None)
    rows, T = (len(seats.learn) if seats is not None else v.num_rows), args.rollout
    n_actions = v.n_actions
    arch = ARCH_OF[args.algo]
    agents = v.agents_per_env
    if seats is not None and arch == "central":
        v.close()
        raise SystemExit(f"{name}: mappo's central critic reads every agent, and seated "
                         f"agents are not trained: use ppo or recppo with seats")
    src = args.init or args.resume
    if src:
        flag = "--init" if args.init else "--resume"
        try:
            doc = ckpt.load(src)
            prep, agent, _ = ckpt.rebuild(doc, src)
        except PolicyError as e:
            v.close()
            raise SystemExit(f"{flag}: {e}")
        why = ckpt.describe_mismatch(ckpt.spec_from(doc["spec"]), spec,
                                     what=f"checkpoint {src}")
        if not why and ckpt.arch_of(doc) != arch:
            why = (f"checkpoint {src} holds a {ckpt.algo_of(doc)} network, --algo is "
                   f"{args.algo}")
        size = nets.critic_size(agents, prep.dim, n_actions, args.critic_actions)
        if not why and arch == "central" and agent.critic_in != size:
            why = (f"checkpoint {src}'s central critic reads {agent.critic_in} values, "
                   f"this run's global input has {size}")
        if not why and args.resume and not doc.get("train_state"):
            why = (f"checkpoint {src} holds no trainer state (Adam's moments, the reward "
                   f"normaliser): it was saved by a trainer without --resume; --init starts "
                   f"a new run from its network")
        if why:
            v.close()
            raise SystemExit(f"{flag}: {why}")
        encoder = doc["model"]["encoder"]
        args.hidden, args.crop = int(doc["model"]["hidden"]), int(doc["model"]["crop"])
        agent.train()
    else:
        try:
            prep, agent, encoder = nets.build(args.encoder, v.obs_fields, v.layout.parts,
                                              v.layout.dim, n_actions, args.hidden, args.crop,
                                              arch=arch, agents=agents,
                                              critic_actions=bool(args.critic_actions))
        except ValueError as e:
            raise SystemExit(f"{name}: {e}")
    obs_dim = prep.dim
    if seats is not None:
        log_fn(f"{name}: seats played, not trained: " + ", ".join(
            f"{v.agent_names[i]}: {who}" for who, ids in seats.by_policy.items() for i in ids))
    log_fn(f"{name}: {args.algo}, {rows} rows, {v.layout.dim} observation values ({obs_dim} "
           f"used), {n_actions} actions, {encoder} encoder, "
           f"{sum(p.numel() for p in agent.parameters()):,} parameters")
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    rnorm = nets.RewardNorm(rows, args.gamma) if args.norm_reward else None
    per_update = T * rows
    budget = int(args.agent_steps)
    steps0 = update0 = 0
    seconds0 = 0.0
    if args.resume:
        # the run goes on where the checkpoint was saved; the games restart (their episodes
        # then were not saved), so the reward normaliser's returns in progress start at 0
        ts, progress = doc["train_state"], doc.get("progress", {})
        steps0 = int(progress.get("agent_steps", 0))
        update0 = int(progress.get("updates", 0))
        seconds0 = float(progress.get("seconds", 0.0))
        try:
            opt.load_state_dict(ts["optimizer"])
            if rnorm is not None and ts.get("reward_norm"):
                rnorm.stats.load(ts["reward_norm"])
            torch.set_rng_state(ts["torch_rng"])
        except (KeyError, ValueError, TypeError, RuntimeError) as e:
            v.close()
            raise SystemExit(f"--resume: checkpoint {args.resume}: trainer state does not "
                             f"fit this run ({type(e).__name__}: {e})")
        for group in opt.param_groups:  # this command's --lr
            group["lr"] = args.lr
        if budget - steps0 < per_update:
            v.close()
            raise SystemExit(f"--resume: checkpoint {args.resume} is at {steps0:,} "
                             f"agent-steps; --agent-steps {budget:,} leaves no update of "
                             f"{per_update:,} to train")
        log_fn(f"{name}: resuming {args.resume} at {steps0:,} agent-steps, update {update0}")

    b_obs = np.zeros((T, rows, obs_dim), np.float32)
    b_mask = np.zeros((T, rows, n_actions), np.int8)
    b_act = np.zeros((T, rows), np.int64)
    b_logp = np.zeros((T, rows), np.float32)
    b_val = np.zeros((T + 1, rows), np.float32)
    b_rew = np.zeros((T, rows), np.float32)
    b_term = np.zeros((T, rows), np.float32)
    b_done = np.zeros((T, rows), np.float32)
    b_valid = np.zeros((T, rows), np.float32)
    recurrent = arch == "lstm"
    central = arch == "central"
    if recurrent:
        # the state before each step (before the episode-start reset) and which steps start
        # an episode: the update replays the rollout's pieces from them
        b_first = np.zeros((T, rows), np.float32)
        b_h = torch.zeros(T, rows, args.hidden)
        b_c = torch.zeros(T, rows, args.hidden)
        state = agent.initial(rows)
        first = np.ones(rows, np.float32)
    if central:
        with_actions = bool(args.critic_actions)
        order = nets.central_order(agents)
        b_glob = np.zeros((T, rows, agent.critic_in), np.float32)

    # a resumed run's games start from other seeds than the run's first ones
    obs, infos = v.reset(seed=args.seed + update0)
    prev_done = np.zeros(rows, bool)
    log = EpisodeLog(seats.learn if seats is not None else None)
    updates = (budget - steps0) // per_update if args.resume else max(1, budget // per_update)
    bar = None
    if not args.quiet:
        try:
            from tqdm import tqdm
            bar = tqdm(total=updates * per_update, unit="agent-step", unit_scale=True,
                       desc=name, dynamic_ncols=True)
        except ImportError:
            pass
    history = []
    if args.resume:
        # the log up to the checkpoint goes on; rows written after it (a run killed after
        # its last checkpoint) are dropped
        try:
            history = [r for r in _plot.read_log(out) if r["agent_steps"] <= steps0]
        except (OSError, ValueError, KeyError):
            history = []
    f_csv = open(os.path.join(out, "log.csv"), "w", newline="")
    writer = csv.DictWriter(f_csv, fieldnames=LOG_FIELDS)
    writer.writeheader()
    f_jsonl = open(os.path.join(out, "log.jsonl"), "w", encoding="utf-8")
    for r in history:
        writer.writerow({k: r.get(k) for k in LOG_FIELDS})
        f_jsonl.write(json.dumps(r) + "\n")
    t_train = time.time()
    steps_done = steps0
    last = {}
    info = scenario_info(args.scenario, overrides)
    hparams = {k: v_ for k, v_ in vars(args).items()}

    def save(path, update):
        ckpt.save(path, net=agent, prep=prep, encoder=encoder, hidden=args.hidden,
                  crop=args.crop, spec=spec, scenario=info, hparams=hparams, arch=arch,
                  agents=agents, critic_actions=bool(args.critic_actions),
                  progress={"agent_steps": steps_done, "updates": update,
                            "seconds": round(seconds0 + time.time() - t_train, 1)},
                  curriculum=source.state() if source is not None else None,
                  train_state={"optimizer": opt.state_dict(),
                               "reward_norm": rnorm.stats.state() if rnorm else None,
                               "torch_rng": torch.get_rng_state()})

    update = update0
    for update in range(update0 + 1, update0 + updates + 1):
        if args.minutes and time.time() - t_train > args.minutes * 60:
            update -= 1
            break
        # ---- rollout ----------------------------------------------------------------------
        for t in range(T):
            xn = prep(obs["observation"][learn])
            b_obs[t] = xn
            b_mask[t] = obs["action_mask"][learn]
            x, m = torch.from_numpy(xn), torch.from_numpy(b_mask[t])
            with torch.no_grad():
                if recurrent:
                    b_first[t] = first
                    b_h[t], b_c[t] = state
                    a, logp, _, val, state = agent.act(x, m, state, torch.from_numpy(first))
                elif central:
                    a, logp, _ = agent.policy(x, m)
                    b_glob[t] = nets.global_input(xn, a.numpy(), agents, n_actions,
                                                  with_actions, order)
                    val = agent.value(torch.from_numpy(b_glob[t]))
                else:
                    a, logp, _, val = agent.act(x, m)
            b_act[t] = a.numpy()
            b_logp[t] = logp.numpy()
            b_val[t] = val.numpy()
            # rows already done (or whose game resets in this step) take no real action
            b_valid[t] = ~prev_done
            if recurrent:
                # a row done before this step is reset by it: its next observation starts an
                # episode
                first = prev_done.astype(np.float32)
            if seats is None:
                obs, rew, term, trunc, infos = v.step(b_act[t])
            else:
                seats.act()
                v.actions[learn] = b_act[t]
                obs, rew, term, trunc, infos = v.step()
                rew, term, trunc = rew[learn], term[learn], trunc[learn]
            done = term | trunc
            b_rew[t] = rnorm(rew, done) if rnorm is not None else rew
            b_term[t] = term
            b_done[t] = done
            prev_done = done.copy()
            log.take(infos)
        with torch.no_grad():
            xn = prep(obs["observation"][learn], update=False)
            x = torch.from_numpy(xn)
            if recurrent:
                b_val[T] = agent.value(x, state, torch.from_numpy(first)).numpy()
            elif central:
                # the critic reads the actions the actors would take there
                a, _, _ = agent.policy(x, torch.from_numpy(obs["action_mask"].astype(np.int8)))
                b_val[T] = agent.value(torch.from_numpy(nets.global_input(
                    xn, a.numpy(), agents, n_actions, with_actions, order))).numpy()
            else:
                b_val[T] = agent.value(x).numpy()
        steps_done += per_update
        # ---- GAE: the value after step t is that of the observation it returned (the final
        # one when the episode ended there); terminations do not bootstrap -----------------
        adv = np.zeros((T, rows), np.float32)
        last_gae = np.zeros(rows, np.float32)
        for t in reversed(range(T)):
            delta = b_rew[t] + args.gamma * b_val[t + 1] * (1.0 - b_term[t]) - b_val[t]
            last_gae = delta + args.gamma * args.lam * (1.0 - b_done[t]) * last_gae
            last_gae *= b_valid[t]
            adv[t] = last_gae
        ret = adv + b_val[:T]
        # ---- update: every row of the rollout is in the batch, weighted by whether it holds
        # a transition (minibatches keep one shape) ------------------------------------------
        o = torch.from_numpy(b_obs.reshape(-1, obs_dim))
        m = torch.from_numpy(b_mask.reshape(-1, n_actions))
        a = torch.from_numpy(b_act.reshape(-1))
        lp_old = torch.from_numpy(b_logp.reshape(-1))
        A = torch.from_numpy(adv.reshape(-1))
        R = torch.from_numpy(ret.reshape(-1))
        V_old = torch.from_numpy(b_val[:T].reshape(-1))
        W = torch.from_numpy(b_valid.reshape(-1))
        if central:
            G = torch.from_numpy(b_glob.reshape(-1, agent.critic_in))
        if recurrent:
            # sequences: piece p of row r covers steps p*L .. p*L+L-1 (flat index t*rows+r)
            L = args.bptt
            pieces = T // L
            n_seq = pieces * rows
            F = torch.from_numpy(b_first)
            steps = torch.arange(L)

        def minibatches():
            """(flat indices, log-probabilities, entropies, values) of each minibatch."""
            if recurrent:
                mbs = max(1, n_seq // args.minibatches)
                perm = torch.randperm(n_seq)
                for s in range(0, n_seq - mbs + 1, mbs):
                    seq = perm[s:s + mbs]
                    t0, r = (seq // rows) * L, seq % rows
                    j = ((t0[None, :] + steps[:, None]) * rows + r[None, :]).reshape(-1)
                    lp, ent, val = agent.unroll(o[j].reshape(L, mbs, obs_dim),
                                                m[j].reshape(L, mbs, n_actions),
                                                a[j].reshape(L, mbs),
                                                F.reshape(-1)[j].reshape(L, mbs),
                                                (b_h[t0, r], b_c[t0, r]))
                    yield j, lp, ent, val
                return
            n = T * rows
            mb = max(1, n // args.minibatches)
            perm = torch.randperm(n)
            for s in range(0, n - mb + 1, mb):
                j = perm[s:s + mb]
                if central:
                    _, lp, ent, val = agent.act(o[j], m[j], G[j], a[j])
                else:
                    _, lp, ent, val = agent.act(o[j], m[j], a[j])
                yield j, lp, ent, val

        for _ in range(args.epochs):
            for j, lp, ent, val in minibatches():
                w = W[j]
                nw = w.sum().clamp_min(1.0)
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
               "seconds": round(seconds0 + time.time() - t_train, 2), "return": mean_ret,
               "total_reward_normalised": mean_norm, "episodes": episodes,
               "policy_loss": float(pg), "value_loss": float(vl), "entropy": float(ent),
               "stage": source.state().get("stage") if source is not None else None}
        last = row
        writer.writerow(row)
        f_csv.flush()
        jrow = dict(row)
        if source is not None:
            jrow["curriculum"] = source.state()
        f_jsonl.write(json.dumps(jrow) + "\n")
        f_jsonl.flush()
        history.append(row)
        if args.save_every and update % args.save_every == 0:
            os.makedirs(os.path.join(out, "checkpoints"), exist_ok=True)
            save(os.path.join(out, "checkpoints", f"policy-{steps_done}.pt"), update)
        if bar is not None:
            bar.update(per_update)
            bar.set_postfix(ret=f"{mean_ret:.2f}" if mean_ret is not None else "-",
                            norm=f"{mean_norm:.3f}" if mean_norm is not None else "-",
                            **({"stage": row["stage"]} if row["stage"] is not None else {}))
    if bar is not None:
        bar.close()
    f_csv.close()
    f_jsonl.close()
    v.close()
    wall = seconds0 + time.time() - t_train
    policy_path = os.path.join(out, "policy.pt")
    save(policy_path, update)
    final = [r for r in history[-max(1, len(history) // 10):] if r["return"] is not None]
    norms = [r["total_reward_normalised"] for r in final
             if r["total_reward_normalised"] is not None]
    summary = {
        "scenario": args.scenario, "args": vars(args), "rows": rows, "encoder": encoder,
        "algo": args.algo,
        "agent_steps": steps_done, "train_seconds": round(wall, 1),
        "seconds_per_million_agent_steps": round(wall / max(steps_done, 1) * 1e6, 1),
        "random": {"return": rand_ret, "total_reward_normalised": rand_norm},
        "baselines": baselines,
        "final": {"return": float(np.mean([r["return"] for r in final])) if final else None,
                  "total_reward_normalised": float(np.mean(norms)) if norms else None},
        "policy": policy_path,
        "curriculum": source.state() if source is not None else None,
        # each --resume of the run: the checkpoint and where it stood
        "resumed": list(prior.get("resumed", [])) + ([{
            "checkpoint": os.path.abspath(args.resume), "agent_steps": steps0,
            "updates": update0, "seconds": seconds0}] if args.resume else []),
    }
    if args.record_episodes:
        from .record import record_policy
        from .checkpoint import CheckpointPolicy
        rec_path = os.path.join(out, "episodes.jsonl.gz")
        res = record_policy(CheckpointPolicy(policy_path, seed=args.seed), args.scenario,
                            rec_path, overrides=overrides, episodes=args.record_episodes,
                            seed=args.seed + 1000)
        summary["recorded"] = {"file": rec_path, **res}
        log_fn(f"{name}: recorded {args.record_episodes} episodes of the trained policy: "
               f"{rec_path} (return {res['return']}, normalised "
               f"{res['total_reward_normalised']})")
    summary["total_seconds"] = round(time.time() - t_start, 1)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    log_fn(f"{name}: {steps_done:,} agent-steps in {wall:.0f} s "
           f"({summary['seconds_per_million_agent_steps']} s per million); final return "
           f"{summary['final']['return']}, normalised "
           f"{summary['final']['total_reward_normalised']} (random {rand_ret}, {rand_norm}); "
           f"{policy_path}")
    _plot.curve(history, summary, os.path.join(out, "curve.png"), name, log_fn=log_fn)
    return summary


def replot(args, log_fn=print):
    out = args.out or os.path.join("runs", os.path.splitext(os.path.basename(args.scenario))[0])
    name = os.path.splitext(os.path.basename(args.scenario))[0]
    try:
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        history = _plot.read_log(out)
    except (OSError, ValueError) as e:
        raise SystemExit(f"--replot: {e}")
    summary["baselines"] = {**summary.get("baselines", {}), **baselines_of(args.baseline)}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    _plot.curve(history, summary, os.path.join(out, "curve.png"), name, log_fn=log_fn)
    return 0


def check(out, args):
    """The smoke run's verdict: every output written, the losses finite, the checkpoint
    loadable and playing the scenario it was trained on."""
    problems = []
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    if args.encoder != "auto" and summary["encoder"] != args.encoder:
        problems.append(f"summary.json: encoder {summary['encoder']}, asked {args.encoder}")
    rows = _plot.read_log(out)
    with open(os.path.join(out, "log.csv")) as f:
        n_csv = len(list(csv.DictReader(f)))
    if not rows or n_csv != len(rows):
        problems.append(f"log.jsonl has {len(rows)} rows, log.csv {n_csv}")
    for r in rows:
        for k in ("policy_loss", "value_loss", "entropy"):
            if not np.isfinite(float(r[k])):
                problems.append(f"update {r['update']}: {k} is {r[k]}")
    if summary["agent_steps"] <= 0:
        problems.append("summary.json: no agent-steps")
    png = os.path.join(out, "curve.png")
    if _plot.have_matplotlib() and (not os.path.exists(png) or not os.path.getsize(png)):
        problems.append("curve.png is missing or empty")
    from .checkpoint import CheckpointPolicy
    pol = CheckpointPolicy(summary["policy"])
    env = polis.vector_env(args.scenario, num_envs=1, flatten=True,
                           overrides=overrides_of(args.set))
    try:
        pol.check(spec_of(env))
        obs, _ = env.reset(seed=3)
        act = np.asarray(pol.act(obs["observation"], obs["action_mask"]))
        if act.shape != (env.num_rows,) or not all(env.masks[i, a] for i, a in enumerate(act)):
            problems.append(f"the checkpoint's actions {act.tolist()} are not legal ones")
    finally:
        env.close()
    if args.record_episodes:
        rec = summary.get("recorded", {}).get("file")
        if not rec or not os.path.getsize(rec):
            problems.append("episodes.jsonl.gz was not written")
    for p in problems:
        print("check failed:", p)
    print("check:", "ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if torch is None:
        print("polis.rl.ppo needs PyTorch (Debian: apt-get install python3-torch)")
        return 77
    if args.replot:
        return replot(args)
    try:
        summary = train(args, log_fn=lambda s: print(s, flush=True))
    except (polis.PolisError, ValueError) as e:
        print(f"polis.rl.ppo: {e}", file=sys.stderr)
        return 1
    if args.check:
        return check(os.path.dirname(summary["policy"]), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
