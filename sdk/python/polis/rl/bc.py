"""Behaviour cloning of the scripted steel maker (``polis.rl.probe steel``) into the PPO
trainer's own network, saved as the trainer's checkpoint (docs/baselines.md, "Exploration:
can PPO hold the steel chain?").

    python3 -m polis.rl.bc [SCENARIO] --episodes 40 --epochs 8 --out runs/bc
    python3 -m polis.rl.probe checkpoint runs/bc/policy.pt --episodes 64
    python3 -m polis.rl.ppo SCENARIO --algo ppo --encoder conv --init runs/bc/policy.pt ...

Every agent plays the steel script (``probe.steel_actions``) for ``--episodes`` episodes
(seeds ``--seed``, ``--seed + 1`` ...); each agent-step's observation is taken as the trainer
takes it (``flatten=True``'s layout, the trainer's ``Prep``: the ``--crop`` cells of the map,
scaled, the other features normalised; the normaliser's statistics are those of all the
recorded observations and are saved in the checkpoint, as the trainer saves its own) with the
script's action and the agent's reward. The trainer's network (``polis.rl.nets.build``,
``--encoder``, ``--hidden``) is trained by cross-entropy between its masked logits (a
forbidden action gets -1e8, as in the trainer) and the script's actions, Adam, minibatches
of ``--batch``. The value head is fitted beside it, on features it does not change (detached),
to the discounted returns (``--gamma``) divided by the std of the running discounted return
(the trainer's reward normaliser, ``--norm-reward 1``): a critic that PPO started from the
clone (``--init``) can use from its first update.

The last tenth of the episodes (at least one, when there are two or more) is held out: its
accuracy is the clone's on play it was not trained on. Writes ``policy.pt`` (the trainer's
checkpoint format, ``polis.rl.checkpoint``) and ``bc.json`` (the script's normalised reward
on the recorded episodes, the samples, and per epoch the losses and accuracies).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

try:
    import torch
    from torch.nn import functional as F
except ImportError:  # the caller says how to install it
    torch = None

import polis
from ..parallel import FlatLayout
from . import checkpoint as ckpt
from . import nets
from . import probe
from .policy import spec_of


def collect(scenario, episodes, seed, prep, layout, gamma, log_fn=print):
    """Plays the steel script; returns (selected raw observations [N, prep.dim] float16,
    masks [N, A] int8, actions [N], value targets [N], episode index [N], the script's
    normalised reward per episode, the reward scale). Each episode's rows are agent-major."""
    env, names = probe.steel_env(scenario)
    try:
        n, ticks = env.n_agents, []
        obs, masks, acts, rews, eps, norms = [], [], [], [], [], []
        flat = np.zeros((n, layout.dim), np.float32)
        for e in range(episodes):
            env.reset(seed + e)
            until = [0] * n
            o, mk, ac, rw = [], [], [], []
            while not env.done:
                layout.fill(flat, env.fields)
                o.append(prep.select(flat).astype(np.float16))
                mk.append(np.array(env.masks, np.int8))
                ac.append(np.array(probe.steel_actions(env, until, names), np.int64))
                env.step()
                rw.append(np.array(env.rewards, np.float64))
            norms.append(probe._normalised(env, scenario))
            t = len(o)
            ticks.append(t)
            # agent-major rows: agent a's steps 0..t-1, then agent a + 1's
            obs.append(np.stack(o, 1).reshape(n * t, -1))
            masks.append(np.stack(mk, 1).reshape(n * t, -1))
            acts.append(np.stack(ac, 1).reshape(-1))
            rews.append(np.stack(rw, 1))  # [agents, t]
            eps.append(np.full(n * t, e))
            log_fn(f"bc: episode {e + 1}/{episodes} (seed {seed + e}): {t} ticks, script's "
                   f"normalised reward {norms[-1]:.4f}")
    finally:
        env.close()
    # the trainer's reward normaliser: rewards over the std of the running discounted return
    run = np.concatenate([_discounted(r, gamma, forward=True).reshape(-1) for r in rews])
    scale = math.sqrt(float(np.var(run)) + 1e-8)
    targets = np.concatenate([_discounted(r, gamma).reshape(-1) for r in rews]) / scale
    return (np.concatenate(obs), np.concatenate(masks), np.concatenate(acts),
            targets.astype(np.float32), np.concatenate(eps), norms, scale)


def _discounted(r, gamma, forward=False):
    """[agents, t] rewards -> returns to go (or, ``forward``, the running discounted sum
    from the episode's start, which the trainer's reward normaliser tracks)."""
    out = np.zeros_like(r)
    acc = np.zeros(r.shape[0])
    steps = range(r.shape[1]) if forward else reversed(range(r.shape[1]))
    for t in steps:
        acc = acc * gamma + r[:, t]
        out[:, t] = acc
    return out


def train(args, log_fn=print):
    """Collects, clones and saves as the arguments say; returns the report (also bc.json)."""
    if torch is None:
        raise SystemExit("polis.rl.bc needs PyTorch (Debian: apt-get install python3-torch)")
    if args.episodes < 1:
        raise ValueError(f"--episodes {args.episodes}: at least one episode is needed")
    if args.epochs < 1 or args.batch < 1:
        raise ValueError("--epochs and --batch must be at least 1")
    if not os.path.exists(args.scenario) and "/" in args.scenario:
        raise ValueError(f"{args.scenario}: no such scenario file")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    t0 = time.time()
    with polis.Env(args.scenario) as env:
        spec = spec_of(env)
        layout = FlatLayout(env.obs_fields)
        fields = env.obs_fields
        n_actions = len(env.action_names)
    prep, net, encoder = nets.build(args.encoder, fields, layout.parts, layout.dim, n_actions,
                                    args.hidden, args.crop, arch="ff")
    X, M, A, V, E, script, scale = collect(args.scenario, args.episodes, args.seed, prep,
                                           layout, args.gamma, log_fn)
    legal = M[np.arange(len(A)), A] != 0
    if not legal.all():  # never expected: the plans' actions are legal ones
        log_fn(f"bc: {int((~legal).sum())} script actions were not legal; dropped")
    # the normaliser's statistics over every recorded observation, in chunks
    for s in range(0, len(X), 4096):
        prep.finish(X[s:s + 4096].astype(np.float32), update=True)
    held = max(1, args.episodes // 10) if args.episodes >= 2 else 0
    is_val = E >= args.episodes - held
    tr = np.flatnonzero(legal & ~is_val)
    va = np.flatnonzero(legal & is_val)
    log_fn(f"bc: {len(tr):,} training and {len(va):,} held-out samples of {prep.dim} values; "
           f"script's normalised reward {np.mean(script):.4f}; {encoder} encoder, "
           f"{sum(p.numel() for p in net.parameters()):,} parameters")

    def batch(j):
        x = torch.from_numpy(prep.finish(X[j].astype(np.float32), update=False))
        return (x, torch.from_numpy(M[j]), torch.from_numpy(A[j]), torch.from_numpy(V[j]))

    def losses(x, m, a, v):
        h = net.features(x)
        logits = net.pi(h).masked_fill(m == 0, -1e8)
        ce = F.cross_entropy(logits, a)
        vl = F.mse_loss(net.v(h.detach()).squeeze(-1), v)
        return ce, vl, (logits.argmax(1) == a).float().mean()

    def evaluate(idx):
        if not len(idx):
            return None
        net.eval()
        tot = np.zeros(3)
        with torch.no_grad():
            for s in range(0, len(idx), 2048):
                j = idx[s:s + 2048]
                tot += np.array([float(z) for z in losses(*batch(j))]) * len(j)
        net.train()
        ce, vl, acc = tot / len(idx)
        return {"loss": ce, "value_loss": vl, "accuracy": acc}

    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    history = []
    net.train()
    for ep in range(1, args.epochs + 1):
        perm = rng.permutation(tr)
        tot, count = np.zeros(3), 0
        for s in range(0, len(perm), args.batch):
            j = np.sort(perm[s:s + args.batch])
            ce, vl, acc = losses(*batch(j))
            opt.zero_grad()
            (ce + args.vf * vl).backward()
            opt.step()
            tot += np.array([float(ce), float(vl), float(acc)]) * len(j)
            count += len(j)
        ce, vl, acc = tot / max(count, 1)
        row = {"epoch": ep, "loss": ce, "value_loss": vl, "accuracy": acc,
               "held_out": evaluate(va), "seconds": round(time.time() - t0, 1)}
        history.append(row)
        h = row["held_out"]
        log_fn(f"bc: epoch {ep}: loss {ce:.4f}, accuracy {acc:.3f}, value loss {vl:.4f}"
               + (f"; held out: loss {h['loss']:.4f}, accuracy {h['accuracy']:.3f}" if h else ""))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "policy.pt")
    from .ppo import scenario_info
    ckpt.save(path, net=net, prep=prep, encoder=encoder, hidden=args.hidden, crop=args.crop,
              spec=spec, scenario=scenario_info(args.scenario, {}),
              hparams={"bc": vars(args)}, arch="ff", agents=len(spec.agents),
              progress={"agent_steps": 0, "updates": 0,
                        "seconds": round(time.time() - t0, 1)})
    report = {"scenario": args.scenario, "args": vars(args), "policy": path,
              "samples": {"train": int(len(tr)), "held_out": int(len(va)),
                          "illegal_dropped": int((~legal).sum())},
              "script_normalised": {"mean": float(np.mean(script)), "per_episode": script},
              "reward_scale": scale, "epochs": history,
              "seconds": round(time.time() - t0, 1)}
    with open(os.path.join(args.out, "bc.json"), "w") as f:
        json.dump(report, f, indent=2)
    log_fn(f"bc: {path} ({report['seconds']} s)")
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m polis.rl.bc",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", default=probe.EXPLORATION)
    ap.add_argument("--episodes", type=int, default=40, help="episodes of the script (40)")
    ap.add_argument("--seed", type=int, default=1, help="first episode's seed (1)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--vf", type=float, default=0.5, help="value-loss coefficient (0.5)")
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--encoder", choices=("auto", "mlp", "conv"), default="conv")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--crop", type=int, default=9)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--out", default="runs/bc")
    args = ap.parse_args(argv)
    if args.episodes < 1:
        ap.error("--episodes must be at least 1")
    if args.epochs < 1 or args.batch < 1:
        ap.error("--epochs and --batch must be at least 1")
    try:
        train(args, log_fn=lambda s: print(s, flush=True))
    except (polis.PolisError, ValueError) as e:
        print(f"polis.rl.bc: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
