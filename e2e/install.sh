#!/usr/bin/env bash
# Installs the pinned agent CLIs the end-to-end suite drives, from the npm
# registry, into one prefix per CLI under $OMNI_E2E_CLIS (default
# e2e/.clis, gitignored). Lifecycle scripts are not run: every binary ships
# inside its package (or its platform package). A CLI that fails to install
# is reported and skipped; its test then skips with a message naming it.
set -uo pipefail
cd "$(dirname "$0")"
dest="${OMNI_E2E_CLIS:-$PWD/.clis}"
mkdir -p "$dest"

# Keep these pins in step with the *Spec constants of e2e/*_test.go (the
# versions docs/HOSTS.md names).
pins=(
  "claude-code @anthropic-ai/claude-code@2.1.328"
  "codex @openai/codex@0.169.0"
  "gemini-cli @google/gemini-cli@0.61.0"
  "opencode opencode-ai@1.18.33"
  # OpenCode installs its plugin API into its config directory at start
  # (over a minute); the tests link this copy there instead.
  "opencode-config @opencode-ai/plugin@1.18.33"
  "copilot @github/copilot@1.0.102"
  # The whole package, not only @cline/cli-linux-x64: Cline's plugin
  # sandbox imports @cline/shared from beside the binary (98 s to install).
  "cline cline@3.0.65"
  # 7.8.1 names a linux-x64 binary package that was never published.
  "kilo @kilocode/cli@7.7.7"
  # The platform package itself: the @factory/cli 0.225.1 wrapper names a
  # @factory/cli-linux-x64 0.225.1 that was never published.
  "droid @factory/cli-linux-x64@0.225.2"
)

status=0
for p in "${pins[@]}"; do
  name="${p%% *}"; spec="${p#* }"
  dir="$dest/$name"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$spec" ]; then
    echo "e2e: $spec already installed"
    continue
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  echo "e2e: installing $spec"
  if npm install --silent --no-audit --no-fund --ignore-scripts --save-exact --prefix "$dir" "$spec" >"$dir/install.log" 2>&1; then
    echo "$spec" > "$dir/.installed"
  else
    echo "e2e: warning: could not install $spec (see $dir/install.log); its test will skip"
    status=1
  fi
done

# OpenCode's grep and glob tools run ripgrep and try to download it when
# it is not on PATH.
if ! command -v rg >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null) 2>/dev/null ||
    echo "e2e: warning: ripgrep not installed; OpenCode's grep tool may not run"
fi
exit 0
