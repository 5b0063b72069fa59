#!/bin/sh
# expect: no_archive
# args: --runs 1
# Exits 0 without writing an archive.
exit 0
