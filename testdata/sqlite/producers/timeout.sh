#!/bin/sh
# expect: timeout
# args: --runs 1 --timeout 1
# Never finishes: fuzz-producer kills its process group after --timeout.
exec sleep 30
