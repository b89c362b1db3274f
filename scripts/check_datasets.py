"""Check Minari datasets made by ``dice-envs datasets`` against their exact references.

For each dataset id: its size, the share of decisions at a best action, its mean return against
``ref_max_score`` (within 2 standard errors is what exact play shows), and whether the recovered
env steps. With ``--regret GAMES``, a ``random`` dataset's points (or chance of winning) lost per
episode is set beside ``scorecard_regret`` / ``farkle_regret`` of ``random`` over GAMES fresh games
(seed 12345): both are estimates of one figure. Prints a Markdown table.

    python scripts/check_datasets.py dice_envs/spiffel/optimal-v0 dice_envs/spiffel/random-v0 --regret 1000
"""

from __future__ import annotations

import argparse
import sys

import minari
import numpy as np

from agents.evaluation.datasets import summarize
from agents.evaluation.regret import farkle_regret, scorecard_regret


def _steps(ds: minari.MinariDataset) -> bool:
    env = ds.recover_environment()
    _, info = env.reset(seed=1)
    obs = env.step(int(np.flatnonzero(info["action_mask"])[0]))[0]
    return env.observation_space == ds.observation_space and env.observation_space.contains(obs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ids", nargs="+", help="dataset ids, e.g. dice_envs/spiffel/optimal-v0")
    p.add_argument("--regret", type=int, default=0, metavar="GAMES", help="compare random's loss")
    args = p.parse_args(argv)
    print(
        "| dataset | episodes | decisions | best action | mean return (s.e.) | ref_max_score "
        "| loss per episode (s.e.) | random's regret, 95% interval | recovered env steps |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for ds_id in args.ids:
        ds = minari.load_dataset(ds_id)
        s, meta = summarize(ds), ds.storage.metadata
        game, policy = ds_id.split("/")[1:3]
        regret = ""
        if args.regret and policy.startswith("random"):
            r = (
                farkle_regret("random", games=args.regret, seed=12345)
                if game == "farkle"
                else scorecard_regret("random", game, games=args.regret, seed=12345)
            )
            regret = f"{r.mean:.4g} [{r.ci95[0]:.4g}, {r.ci95[1]:.4g}]"
        print(
            f"| `{ds_id}` | {s['episodes']:,} | {s['decisions']:,} | {s['best_share']:.2%} "
            f"| {s['mean_return']:.4g} ({s['mean_return_se']:.2g}) | {meta['ref_max_score']:.4f} "
            f"| {s['loss_per_episode']:.4g} ({s['loss_per_episode_se']:.2g}) | {regret} "
            f"| {'yes' if _steps(ds) else 'NO'} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
