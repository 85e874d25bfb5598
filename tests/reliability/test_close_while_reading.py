"""Closing a registry file while other threads read it: their reads end first, nothing crashes.

sqlite3 connections made for any thread (`check_same_thread=False`) free their memory on close even while
another thread is inside a call on them: the process dies with SIGSEGV, no Python error. A fresh-clone CI run
died that way when a test closed a served registry while its proposal tally read in the background
(server/_proposal_tally.py). The sequence runs in a child process, so a crash is this test's failure, not the
end of the test run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from registry import Registry, seed_sample_data
from serving import PROJECT_ROOT

ROUNDS = 150
CHILD = textwrap.dedent(
    """
    import sys, threading, time
    from registry import Registry, RegistryError

    path, rounds = sys.argv[1], int(sys.argv[2])
    answered = 0
    for _ in range(rounds):
        reg = Registry.open(path)
        stop = threading.Event()

        def read():
            global answered
            while not stop.is_set():
                try:
                    reg.proposals.counts()
                    reg.tenants()
                    answered += 1
                except RegistryError:
                    pass  # a read after the close may open the file again or be refused; never a crash

        readers = [threading.Thread(target=read) for _ in range(2)]
        for reader in readers:
            reader.start()
        time.sleep(0.005)
        reg.close()
        stop.set()
        for reader in readers:
            reader.join()
    print(answered)
    """
)


def test_closing_while_two_threads_read_waits_for_them(tmp_path: Path) -> None:
    path = tmp_path / "registry.db"
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(ROUNDS)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert int(done.stdout) > ROUNDS  # the readers did read while the handles closed
