#!/usr/bin/env bash
# The security interop tests make their certificates with the openssl command;
# the clients they drive are installed by test/interop/kafka and test/interop/kcat.
set -euo pipefail
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
