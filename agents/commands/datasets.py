"""dice-envs datasets: a Minari dataset of one policy's games, every decision valued exactly.

Writes the dataset dice_envs/GAME/POLICY-v0 (a ':' of the policy becomes '-') in Minari's local
datasets folder ($MINARI_DATASETS_PATH, else ~/.minari/datasets); an existing one is replaced
only with --force. Each observation's info holds action_values (the exact value of every action:
expected final future points in the scorecard games, the chance of winning in two-player Farkle,
where win-optimal sits in seat 1; -inf for an illegal action) and action_value (that of the
action taken). Load it with minari.load_dataset(ID). Needs the [datasets] extra. Exit status 2
on bad input.

examples:
  dice-envs datasets --game spiffel --policy optimal --episodes 1000
  dice-envs datasets --game yahtzee --policy pretrained:yahtzee-search --episodes 1000 --seed 7
  dice-envs datasets --game farkle --policy heuristic --episodes 500 --force
"""

from __future__ import annotations

import argparse
import sys
import time

from agents.commands.cli import error
from agents.evaluation import parse_rule_overrides
from agents.evaluation.datasets import collect, summarize
from agents.registry import check_seed_arg
from dice_envs.rules import ConfigError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    p = argparse.ArgumentParser(
        prog="dice-envs datasets",
        description=__doc__.split("\n\nexamples:")[0],
        epilog="examples:" + __doc__.split("\n\nexamples:")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--game", required=True, help="spiffel, dice_poker, yahtzee or farkle")
    p.add_argument("--policy", required=True, help="the agent spec that plays (an error lists those offered)")
    p.add_argument("--episodes", type=int, required=True, help="games to record")
    p.add_argument("--players", type=int, default=None, help="1 (scorecard games) or 2 (Farkle), the default")
    p.add_argument("--seed", type=int, default=0, help="episode i is seeded seed + i (default 0)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule parameters")
    p.add_argument("--force", action="store_true", help="replace an existing dataset of the same id")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    try:
        check_seed_arg(args.seed, "--seed", none=False)
        ds = collect(
            args.game,
            args.policy,
            args.episodes,
            seed=args.seed,
            players=args.players,
            rules=parse_rule_overrides(args.rules),
            force=args.force,
        )
    except ConfigError as exc:
        return error(exc)
    print(
        f"wrote {ds.spec.dataset_id}: {ds.total_episodes} episodes, {ds.total_steps} steps, in "
        f"{ds.storage.data_path.parent} ({time.perf_counter() - t0:.1f} s)"
    )
    s = summarize(ds)
    print(
        f"mean return {s['mean_return']:.4g} (s.e. {s['mean_return_se']:.2g}); loss per decision "
        f"{s['loss_per_decision']:.4g}, per episode {s['loss_per_episode']:.4g} "
        f"(s.e. {s['loss_per_episode_se']:.2g}); best action at {s['best_share']:.2%} of decisions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
