"""The wheel's ``dsh-fs`` command: the Rust command line, run in this process
from the same native library as the Python API."""

import signal
import sys

from . import _native


def main() -> None:
    # The command runs in native code without returning to Python, where
    # Python's Ctrl-C handler would only set a flag: let SIGINT end it, as it
    # ends the native binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_native.main(sys.argv))
