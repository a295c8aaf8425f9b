"""polis.registry: ids of the shipped scenarios, polis.make (PettingZoo's Parallel API by id),
and gymnasium.make("polis/<Game>-v0") — registered when `import polis` finds gymnasium. The
gymnasium here is a stand-in written to gymnasium's documented registration API
(``register(id, entry_point, kwargs=...)``, ``make(id, **kwargs)`` calling the entry point
with the spec's kwargs updated by make's, ``registry`` a dict of ids); the real one, when
installed, is exercised by conformance.py."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import polis
from common import ROOT, needs_numpy

STANDIN = textwrap.dedent('''
    """A stand-in for gymnasium's registration API (gymnasium/envs/registration.py)."""
    import importlib
    registry = {}
    calls = []

    class EnvSpec:
        def __init__(self, id, entry_point, kwargs=None, **other):
            self.id, self.entry_point, self.kwargs, self.other = id, entry_point, dict(kwargs or {}), other

    def register(id, entry_point=None, **kw):
        if id in registry:
            raise RuntimeError(f"{id} registered twice")
        calls.append(id)
        registry[id] = EnvSpec(id, entry_point, **kw)

    def make(id, **kwargs):
        spec = registry[id]
        fn = spec.entry_point
        if isinstance(fn, str):
            mod, attr = fn.split(":")
            fn = getattr(importlib.import_module(mod), attr)
        k = dict(spec.kwargs)
        k.update(kwargs)
        env = fn(**k)
        env.spec = spec
        return env
''')


class TestRegistry(unittest.TestCase):
    def test_every_shipped_scenario_has_an_id(self):
        ids = polis.registry.ids()
        for want in ("polis/Contract-v0", "polis/ContractHard-v0", "polis/Negotiation-v0",
                     "polis/CommonsOpenVisitors-v0", "polis/SurvivalClassic-v0",
                     "polis/Exploration-v0", "polis/Gather-v0"):
            self.assertIn(want, ids)
        files = polis.registry.scenarios()
        self.assertTrue(all(p.endswith(".json") and os.path.isfile(p) for p in files.values()))
        # curricula and populations are not scenarios
        self.assertFalse(any("curriculum" in p or "populations" in p for p in files.values()))
        self.assertEqual(polis.registry.scenario_of("contract"), files["polis/Contract-v0"])
        self.assertEqual(polis.registry.scenario_of("ContractHard-v0"),
                         files["polis/ContractHard-v0"])

    def test_unknown_id_suggests(self):
        with self.assertRaises(polis.PolisIOError) as cm:
            polis.make("Contrat-v0")
        self.assertIn("no polis scenario with the id 'Contrat-v0' (did you mean polis/Contract-v0",
                      str(cm.exception))

    def test_make_is_the_parallel_api_with_overrides(self):
        env = polis.make("polis/Gather-v0", max_steps=7)
        self.assertIsInstance(env, polis.ParallelEnv)
        env.reset(seed=1)
        for _ in range(7):
            env.step({a: 0 for a in env.agents})
        self.assertEqual(env.agents, [])
        env.close()
        try:
            import pettingzoo  # noqa: F401
        except ImportError:  # make_aec needs PettingZoo's parallel_to_aec: it says so
            with self.assertRaisesRegex(ImportError, "needs pettingzoo"):
                polis.make_aec("gather")
            return
        aec = polis.make_aec("gather", max_steps=3)
        aec.reset(seed=0)
        self.assertEqual(aec.agent_selection, "agent_0")
        aec.close()


@needs_numpy
class TestGymnasiumRegistration(unittest.TestCase):
    def run_py(self, code, with_standin=True):
        d = tempfile.mkdtemp(prefix="polis_gym_")
        if with_standin:
            os.makedirs(os.path.join(d, "gymnasium"))
            with open(os.path.join(d, "gymnasium", "__init__.py"), "w") as f:
                f.write(STANDIN)
        sdk = os.path.dirname(os.path.dirname(polis.__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([d, sdk]))
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                           text=True, env=env, timeout=120, cwd=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_import_registers_and_make_builds(self):
        out = self.run_py('''
            import gymnasium, polis
            assert set(gymnasium.calls) == set(polis.registry.ids()), "every id, once"
            env = gymnasium.make("polis/Contract-v0", max_steps=25, agent="miner_2",
                                 others="random")
            assert isinstance(env, polis.GymEnv) and env.agent == "miner_2"
            obs, info = env.reset(seed=4)
            steps, done = 0, False
            while not done:
                obs, r, term, trunc, info = env.step(0)
                steps += 1
                done = term or trunc
            print(steps, env.parallel.core.max_steps, env.spec.id)
            # importing again registers nothing twice
            import importlib
            assert polis.registry.register_gymnasium() == []
        ''')
        self.assertEqual(out.split(), ["25", "25", "polis/Contract-v0"])

    def test_without_gymnasium_nothing_is_registered(self):
        out = self.run_py('''
            import sys
            sys.modules["gymnasium"] = None
            import polis
            print(polis.registry.register_gymnasium(), len(polis.registry.ids()) > 20)
        ''', with_standin=False)
        self.assertEqual(out.split(), ["[]", "True"])


if __name__ == "__main__":
    unittest.main()
