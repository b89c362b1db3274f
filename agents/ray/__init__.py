"""Ray: tournaments on a cluster, hyper-parameter sweeps on Ray Tune, and RLlib training."""
