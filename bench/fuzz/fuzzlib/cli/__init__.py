"""The CLI fuzzer's cases (`generate`: case i of seed s), the generators of their flags, CSV
datasets and commands, and the driver that runs, tallies and replays them."""
