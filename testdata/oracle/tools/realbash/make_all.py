#!/usr/bin/env python3
"""Regenerate everything: run the harness over all revisions/points (phases A-D, resumable:
finished work units in /tmp/rb/work are kept), then build the deliverable and README.
Usage: python3 /tmp/rb/lib/make_all.py [--deadline EPOCH] [--phases ABCD]"""
import subprocess, sys
args = sys.argv[1:]
subprocess.run([sys.executable, '/tmp/rb/lib/run_all.py'] + args, check=True)
subprocess.run([sys.executable, '/tmp/rb/lib/assemble.py'], check=True)
subprocess.run([sys.executable, '/tmp/rb/lib/readme.py'], check=True)
