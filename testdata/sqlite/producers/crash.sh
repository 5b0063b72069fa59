#!/bin/sh
# expect: crash
# args: --runs 1
# Kills itself with SIGSEGV (no core dump).
ulimit -c 0 2>/dev/null
kill -s SEGV $$
