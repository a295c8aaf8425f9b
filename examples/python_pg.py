#!/usr/bin/env python3
"""A minimal policy-gradient (REINFORCE) training loop in numpy on the gather game.

    python3 examples/python_pg.py                 # a few seconds on one core
    python3 examples/python_pg.py --iterations 40 --check

One linear softmax policy is shared by the four agents. Its input is the agent's
egocentric window (the ``view`` observation field: other agents, coins, cells off the
map), its output one logit per action; illegal actions are masked out with the
observation's ``action_mask`` before sampling. After each batch of episodes the weights
move along the return-weighted gradient of log pi (discounted returns, a per-step
baseline, normalised advantages, Adam).

It prints the moving average of coins per agent per episode over 100-step episodes: the
untrained policy (uniform over the legal actions) collects about 2.7, the trained one over
15 within 40 updates and about 25 after 100. ``--check`` exits 1 unless the final moving
average beats the first batch by 50%, so the example is also a test. No torch, no gymnasium:
numpy and the polis SDK only.
"""

import argparse
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("python_pg.py needs numpy (Debian: apt-get install python3-numpy)")

import _sdk  # noqa: F401  (finds polis in a source checkout)
import polis


def features(obs, agents):
    """[len(agents), n_features] float32: the window's channels as indicator planes."""
    view = np.stack([obs[a]["observation"]["view"] for a in agents])  # [n, 2, w, w] int8
    n = view.shape[0]
    coins = (view[:, 1] > 0).reshape(n, -1)
    others = (view[:, 0] == 1).reshape(n, -1)
    outside = (view[:, 0] < 0).reshape(n, -1)
    bias = np.ones((n, 1), bool)
    return np.concatenate([coins, others, outside, bias], axis=1).astype(np.float32)


def masked_softmax(logits, mask):
    z = np.where(mask > 0, logits, -np.inf)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class Adam:
    def __init__(self, shape, lr):
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)
        self.t = 0
        self.lr = lr

    def step(self, w, grad):  # gradient ascent
        self.t += 1
        self.m = 0.9 * self.m + 0.1 * grad
        self.v = 0.999 * self.v + 0.001 * grad * grad
        mh = self.m / (1 - 0.9 ** self.t)
        vh = self.v / (1 - 0.999 ** self.t)
        w += self.lr * mh / (np.sqrt(vh) + 1e-8)


def run_episode(env, w, rng, seed):
    """Plays one episode with the policy; returns per-agent trajectories and coins."""
    obs, _ = env.reset(seed=seed)
    agents = list(env.agents)
    xs, acts, probs, rews = [], [], [], []
    coins = np.zeros(len(agents))
    while env.agents:
        x = features(obs, agents)
        mask = np.stack([obs[a]["action_mask"] for a in agents])
        p = masked_softmax(x @ w.T, mask)
        u = rng.random((len(agents), 1))
        a = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), p.shape[1] - 1)
        obs, rewards, _, _, _ = env.step({ag: int(a[i]) for i, ag in enumerate(agents)})
        r = np.array([rewards[ag] for ag in agents])
        coins += r
        xs.append(x)
        acts.append(a)
        probs.append(p)
        rews.append(r)
    return np.array(xs), np.array(acts), np.array(probs), np.array(rews), coins


def discounted(rews, gamma):
    out = np.zeros_like(rews)
    g = np.zeros(rews.shape[1])
    for t in range(len(rews) - 1, -1, -1):
        g = rews[t] + gamma * g
        out[t] = g
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--episodes", type=int, default=4, help="episodes per update")
    ap.add_argument("--max-steps", type=int, default=100, help="episode length")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--window", type=int, default=10,
                    help="moving average over this many updates")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the reward went up by at least 50%%")
    args = ap.parse_args(argv)

    # Scenario overrides: shorter episodes, a wider view window.
    env = polis.parallel_env("gather", max_steps=args.max_steps,
                             plugins__gather__params__view=3)
    n_actions = env.core.n_actions
    obs, _ = env.reset(seed=args.seed)
    n_features = features(obs, env.agents).shape[1]
    rng = np.random.default_rng(args.seed)
    w = np.zeros((n_actions, n_features))
    opt = Adam(w.shape, args.lr)
    history, averages = [], []
    t0 = time.perf_counter()
    print(f"gather, {len(env.possible_agents)} agents sharing a linear policy over "
          f"{n_features} features; {args.episodes} episodes x {args.max_steps} steps per "
          f"update")
    for it in range(args.iterations):
        grad = np.zeros_like(w)
        batch_coins = []
        episodes = [run_episode(env, w, rng, seed=args.seed + 1 + it * args.episodes + e)
                    for e in range(args.episodes)]
        returns = np.array([discounted(ep[3], args.gamma) for ep in episodes])
        baseline = returns.mean(axis=(0, 2), keepdims=True)  # per time step
        adv = returns - baseline
        adv /= adv.std() + 1e-8
        for (xs, acts, probs, _, coins), ad in zip(episodes, adv):
            # d log pi(a|x) / dW = (onehot(a) - pi) outer x, summed over steps and agents
            onehot = np.eye(n_actions)[acts]
            grad += np.einsum("ta,tak,taf->kf", ad, onehot - probs, xs)
            batch_coins.append(coins.mean())
        grad /= adv.size
        opt.step(w, grad)
        history.append(float(np.mean(batch_coins)))
        avg = float(np.mean(history[-args.window:]))
        averages.append(avg)
        if it % 5 == 0 or it == args.iterations - 1:
            print(f"update {it:3d}  episodes {(it + 1) * args.episodes:4d}  coins per agent "
                  f"per episode: this batch {history[-1]:5.2f}, moving average "
                  f"{avg:5.2f}  ({time.perf_counter() - t0:5.1f} s)")
    env.close()
    first, last = history[0], averages[-1]
    print(f"first batch {first:.2f} -> moving average {last:.2f} coins per agent per "
          f"episode ({last / max(first, 1e-9):.1f}x)")
    if args.check and not last >= 1.5 * first:
        print("check failed: the reward did not go up by 50%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
