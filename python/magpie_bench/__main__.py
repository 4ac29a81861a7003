"""`python3 -m magpie_bench`: see magpie_bench.cli."""
import sys

from magpie_bench.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
