#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, record sched and irq events for a
# second, print them, and put tracefs back as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --bin tracectl
tracectl=$PWD/target/release/tracectl
# Shell completions, where this machine has a directory for them and we may write there.
for spec in bash:/usr/share/bash-completion/completions/tracectl \
            zsh:/usr/share/zsh/vendor-completions/_tracectl \
            fish:/usr/share/fish/vendor_completions.d/tracectl.fish; do
    shell=${spec%%:*} file=${spec#*:}
    if [ -d "$(dirname "$file")" ] && [ -w "$(dirname "$file")" ]; then
        "$tracectl" completions "$shell" > "$file" && echo "demo: installed $shell completions in $file"
    fi
done
if [ "$(id -u)" != 0 ]; then
    echo "demo: tracing needs root; run: sudo bash scripts/demo.sh" >&2
    exit 1
fi
# Trace in a private instance so nothing else using tracefs is disturbed, and remove it
# on every exit path.
instance=tracectl-demo-$$
trap '"$tracectl" reset -B "$instance" -d >/dev/null 2>&1 || true' EXIT
"$tracectl" start -B "$instance" -e sched -e irq
sleep 1
"$tracectl" stop -B "$instance"
"$tracectl" show -B "$instance" | head -50
echo
"$tracectl" stat -B "$instance" | grep -E 'Events|cpu[0-9]+:' | cut -c1-200
