#!/usr/bin/env bash
# Issue 14, family 7 (background work): a script (no job control, so its
# background job stays in the terminal's foreground process group) starts
# `sleep 1000 &`, then reads lines from its terminal. Only the terminal can
# wake it; the background sleep never touches the terminal.
#
#     bash background_read.sh
#
# Prompts `bg> `; answers each line with `ANSWER-<line>`.
sleep 1000 &
trap 'kill $! 2>/dev/null' EXIT
while read -r -p 'bg> ' line; do
  echo "ANSWER-$line"
done
