"""Prints why a Python test cannot run in this build and exits 77, CTest's skip code for
the Python tests (SKIP_RETURN_CODE in CMakeLists.txt)."""
import sys

print("skipped: " + " ".join(sys.argv[1:]))
sys.exit(77)
