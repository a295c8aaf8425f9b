"""Checkpoints of polis's PPO trainer: save, load, and play one as a ``Policy``.

A checkpoint is one ``torch.save`` file holding a dict (format ``"polis-policy"``, version
``FORMAT_VERSION``):

| key | what |
|---|---|
| ``format``, ``version`` | ``"polis-policy"``, 1 |
| ``scenario`` | ``{"name", "file", "text", "overrides"}``: what it was trained on (the file's path and its JSON text as read, the overrides of the run) |
| ``spec`` | ``{"scenario", "agents", "actions", "obs_fields", "obs_dim"}``: the action names and the observation layout it reads (``polis.rl.policy.EnvSpec``) |
| ``model`` | ``{"encoder", "hidden", "crop", "in_dim", "n_actions", "arch", "agents", "critic_actions"}``: how to rebuild the network; ``arch`` is ``"ff"`` (PPO), ``"lstm"`` (RecPPO) or ``"central"`` (MAPPO, whose critic read ``agents`` observations and with ``critic_actions`` the others' actions); a checkpoint without ``arch`` is ``"ff"`` |
| ``prep`` | the observation normaliser's running statistics |
| ``state_dict`` | the network's parameters |
| ``hparams`` | the trainer's arguments |
| ``progress`` | ``{"agent_steps", "updates", "seconds"}`` when it was saved |
| ``curriculum`` | the curriculum's state then (stage, episodes), or None |
| ``train_state`` | what ``--resume`` continues a run from (absent in checkpoints written before it): ``{"optimizer"`` (Adam's state dict), ``"reward_norm"`` (the reward normaliser's running statistics, or None), ``"torch_rng"}``; about twice the network's size again |

Loading checks the format and version and rebuilds the network; playing it in an env with
other actions or another observation layout is refused naming the first difference. A
MAPPO checkpoint plays with its actor alone; a RecPPO one keeps an LSTM state per seat
(``CheckpointPolicy.stateful``).
"""

from __future__ import annotations

import os

import numpy as np
import torch

from . import nets
from .policy import EnvSpec, Policy, PolicyError, PolicyMismatch, describe_mismatch

FORMAT = "polis-policy"
FORMAT_VERSION = 1


def spec_dict(spec):
    return {"scenario": spec.scenario, "agents": list(spec.agents),
            "actions": list(spec.actions),
            "obs_fields": [[n, list(s)] for n, s in spec.obs_fields], "obs_dim": spec.obs_dim}


ALGO_OF = {"ff": "ppo", "lstm": "recppo", "central": "mappo"}


def save(path, *, net, prep, encoder, hidden, crop, spec, scenario, hparams=None,
         progress=None, curriculum=None, arch="ff", agents=1, critic_actions=True,
         train_state=None):
    """Writes a checkpoint (atomically: a temporary file renamed over ``path``)."""
    doc = {
        "format": FORMAT, "version": FORMAT_VERSION,
        "scenario": scenario, "spec": spec_dict(spec),
        "model": {"encoder": encoder, "hidden": hidden, "crop": crop,
                  "in_dim": prep.in_dim, "n_actions": len(spec.actions), "arch": arch,
                  "agents": int(agents), "critic_actions": bool(critic_actions)},
        "prep": {"norm": prep.norm.state()},
        "state_dict": net.state_dict(),
        "hparams": dict(hparams or {}), "progress": dict(progress or {}),
        "curriculum": curriculum,
    }
    if train_state is not None:
        doc["train_state"] = train_state
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save(doc, tmp)
    os.replace(tmp, path)


def _load_doc(path):
    try:
        try:
            doc = torch.load(path, map_location="cpu", weights_only=False)
        except TypeError:  # a PyTorch without weights_only
            doc = torch.load(path, map_location="cpu")
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such checkpoint") from None
    except Exception as e:  # torch raises many kinds for a file that is not its own
        raise PolicyError(f"{path}: not a polis checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise PolicyError(f"{path}: not a polis checkpoint (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != FORMAT_VERSION:
        raise PolicyError(f"{path}: checkpoint format version {doc.get('version')!r}; this "
                          f"polis reads version {FORMAT_VERSION}")
    for key in ("spec", "model", "prep", "state_dict", "scenario"):
        if key not in doc:
            raise PolicyError(f"{path}: checkpoint without {key!r}")
    return doc


def load(path):
    """The checkpoint's dict, checked (PolicyError when it is not one this polis reads)."""
    return _load_doc(path)


def arch_of(doc):
    """The network architecture of a loaded checkpoint: "ff", "lstm" or "central"."""
    return doc["model"].get("arch", "ff")


def algo_of(doc):
    """The trainer's --algo that makes a checkpoint's network: ppo, recppo or mappo."""
    return ALGO_OF.get(arch_of(doc), arch_of(doc))


def spec_from(d):
    return EnvSpec(d["scenario"], tuple(d["agents"]), tuple(d["actions"]),
                   tuple((n, tuple(s)) for n, s in d["obs_fields"]), int(d["obs_dim"]))


class _Fields:
    __slots__ = ("name", "shape")

    def __init__(self, name, shape):
        self.name, self.shape = name, tuple(shape)


def rebuild(doc, path="checkpoint"):
    """(prep, net, spec) of a loaded checkpoint dict."""
    spec = spec_from(doc["spec"])
    m = doc["model"]
    fields = [_Fields(n, s) for n, s in spec.obs_fields]
    parts, off = [], 0
    for f in fields:
        size = int(np.prod(f.shape)) if f.shape else 1
        parts.append((f.name, off, size))
        off += size
    try:
        prep, net, enc = nets.build(m["encoder"], fields, parts, int(m["in_dim"]),
                                    int(m["n_actions"]), int(m["hidden"]), int(m["crop"]),
                                    arch=m.get("arch", "ff"), agents=int(m.get("agents", 1)),
                                    critic_actions=bool(m.get("critic_actions", True)))
        prep.norm.load(doc["prep"]["norm"])
        net.load_state_dict(doc["state_dict"])
    except (KeyError, ValueError, RuntimeError) as e:
        raise PolicyError(f"{path}: the network does not rebuild: {e}") from None
    net.eval()
    return prep, net, spec


class CheckpointPolicy(Policy):
    """A trained checkpoint as a Policy: samples from its masked action distribution (or
    takes the most likely legal action with ``deterministic``). A MAPPO checkpoint plays its
    actor. A RecPPO checkpoint is ``stateful``: it keeps an LSTM state per seat, carried from
    one ``act`` to the next and zeroed by ``reset(seats)``; hosts pass the seats of each
    ``act`` (``act(obs, mask, seats=[...])``; without them row i is seat i)."""

    def __init__(self, path, deterministic=False, seed=0):
        self.path = os.fspath(path)
        self.doc = _load_doc(self.path)
        self.prep, self.net, self.spec = rebuild(self.doc, self.path)
        self.deterministic = deterministic
        self.gen = torch.Generator().manual_seed(int(seed))
        self.stateful = arch_of(self.doc) == "lstm"
        self.states = {}  # seat -> (h, c), each [hidden]
        steps = self.doc.get("progress", {}).get("agent_steps")
        self.name = (f"{algo_of(self.doc)}:{os.path.basename(self.path)}"
                     + (f"@{steps}" if steps else ""))

    def check(self, spec):
        why = describe_mismatch(self.spec, spec, what=f"checkpoint {self.path}")
        if why:
            raise PolicyMismatch(why)

    def reset(self, seats):
        for s in seats:
            self.states.pop(int(s), None)

    def state_of(self, seat):
        """A stateful policy's (h, c) for ``seat`` (zeros before its first step)."""
        zero = torch.zeros(self.net.hidden)
        return self.states.get(int(seat), (zero, zero))

    def act(self, obs, mask, seats=None):
        x = torch.from_numpy(self.prep(np.asarray(obs, np.float32), update=False))
        m = torch.as_tensor(np.array(mask, np.uint8))  # a copy: the host's buffer is read-only
        with torch.no_grad():
            if self.stateful:
                seats = range(len(x)) if seats is None else [int(s) for s in seats]
                st = [self.state_of(s) for s in seats]
                h = torch.stack([p[0] for p in st]) if st else torch.zeros(0, self.net.hidden)
                c = torch.stack([p[1] for p in st]) if st else torch.zeros(0, self.net.hidden)
                logits, (h, c) = self.net.logits(x, (h, c), torch.zeros(len(x)))
                for i, s in enumerate(seats):
                    self.states[s] = (h[i], c[i])
            else:
                logits = self.net.logits(x)
            logits = logits.masked_fill(m == 0, -1e8)
            if self.deterministic:
                return logits.argmax(1).numpy()
            return torch.multinomial(torch.softmax(logits, 1), 1, generator=self.gen)[:, 0].numpy()
