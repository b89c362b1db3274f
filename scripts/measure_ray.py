#!/usr/bin/env python
"""Measure Ray here: local Ray start time, and RLlib env steps/s with 1 and 2 env runners.

    nice -n 15 python scripts/measure_ray.py [--game farkle] [--steps 2000] [--runners 1 2]

Prints (and with ``--json PATH`` writes) the time ``ray.init`` takes to start a local Ray,
the raw :class:`~agents.ray.rllib.env.DiceMultiAgentEnv` speed in this process (random legal
actions, no RLlib), and for each runner count the sampling throughput of RLlib's env runners
(the masked PPO module acting, Farkle 2-player against ``heuristic`` by default): each runner
samples ``--steps`` env steps in parallel, steps/s = all steps / wall time of the slowest.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def raw_env_speed(game: str, steps: int, env_config: dict) -> float:
    import numpy as np

    from agents.ray.rllib.env import DiceMultiAgentEnv

    env = DiceMultiAgentEnv({"game": game, **env_config})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    t0 = time.perf_counter()
    for _ in range(steps):
        ((agent, o),) = obs.items()
        obs, _, term, trunc, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="farkle")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", nargs="*", default=["heuristic"])
    p.add_argument("--steps", type=int, default=2000, help="env steps sampled per runner")
    p.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)

    import ray

    t0 = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    start_s = time.perf_counter() - t0
    from agents.ray.rllib import ppo_config

    results = {
        "game": args.game,
        "players": args.players,
        "opponents": args.opponents,
        "ray_init_s": round(start_s, 2),
        "raw_env_steps_per_s": round(raw_env_speed(args.game, args.steps, {"num_players": args.players}), 1),
        "rllib": [],
    }
    print(f"local ray.init: {start_s:.1f} s; raw env: {results['raw_env_steps_per_s']:.0f} steps/s")
    for n in args.runners:
        cfg = ppo_config(
            args.game,
            num_players=args.players,
            opponents=args.opponents,
            num_env_runners=n,
            net_arch=(64, 64),
        )
        t_build = time.perf_counter()
        algo = cfg.build_algo()
        build_s = time.perf_counter() - t_build
        group = algo.env_runner_group
        group.foreach_env_runner(lambda r: r.sample(num_timesteps=200), local_env_runner=False)  # warm-up
        t1 = time.perf_counter()
        group.foreach_env_runner(lambda r, k=args.steps: r.sample(num_timesteps=k), local_env_runner=False)
        wall = time.perf_counter() - t1
        row = {
            "env_runners": n,
            "build_s": round(build_s, 1),
            "env_steps": n * args.steps,
            "steps_per_s": round(n * args.steps / wall, 1),
        }
        results["rllib"].append(row)
        print(f"{n} env runner(s): {row['steps_per_s']:.0f} env steps/s (algo built in {build_s:.1f} s)")
        algo.stop()
    ray.shutdown()
    if args.json:
        from dice_envs.io import atomic_write_text

        # --json names the file the figures go to: it is rewritten, as the user asked
        atomic_write_text(args.json, json.dumps(results, indent=2) + "\n", overwrite=True)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
