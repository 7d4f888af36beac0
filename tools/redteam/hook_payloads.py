#!/usr/bin/env python3
"""Attack script: feed the real omni-hook binary payloads that mix the
keys of two hosts, name odd transcript / session / persisted-output
files (FIFO, /dev/zero, a symlink loop, a directory, a 1 MiB path, a
file of another mode), and carry a credential generated now in the tool
output. Every call must exit 0 within the hook deadline (4 s, plus
start-up), and nothing it prints may hold the credential.

usage: tools/redteam/hook_payloads.py /path/to/omni-hook
"""
import json, os, secrets, string, subprocess, sys, tempfile, time

hook = sys.argv[1]
d = tempfile.mkdtemp(prefix="omni-redteam-")
home, oh = os.path.join(d, "home"), os.path.join(d, "oh")
os.makedirs(home); os.makedirs(oh)
tok = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
aws = "AKIA" + "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16))

fifo = os.path.join(d, "rollout-2026-fifo.jsonl"); os.mkfifo(fifo)
loop = os.path.join(d, "rollout-loop.jsonl"); os.symlink(loop, loop)
zero = os.path.join(d, "rollout-zero.jsonl"); os.symlink("/dev/zero", zero)
sess = os.path.join(d, "sess.jsonl")
tr = os.path.join(d, "sess", "tool-results"); os.makedirs(tr)
pfifo = os.path.join(tr, "out.txt"); os.mkfifo(pfifo)
big = "/" + "a" * (1 << 20) + ".jsonl"
transcripts = [fifo, loop, zero, d, big, "", "relative/rollout-x.jsonl", "/proc/self/fd/0", sess]

out = "\n".join([f"line {i}" for i in range(300)] + [f"export GITHUB_TOKEN={tok}", f"aws_access_key_id = {aws}"])
payloads = []
for t in transcripts:
    base = {"session_id": "s1", "transcript_path": t, "cwd": d, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_use_id": "call_1", "tool_input": {"command": "cat big.log"}}
    payloads.append(dict(base, turn_id="t1", tool_response=out))                          # Codex
    payloads.append(dict(base, tool_response={"stdout": out, "stderr": "", "interrupted": False}))  # Claude
    payloads.append(dict(base, turn_id="t1", tool_response={"stdout": out, "persistedOutputPath": pfifo}))  # both
    payloads.append(dict(base, tool_response={"stdout": out[:100], "persistedOutputPath": pfifo, "persistedOutputSize": 10**6}))
    payloads.append(dict(base, host="opencode", turn_id="t1", toolName="bash", tool_response=out))  # three hosts
    payloads.append(dict(base, hook_event_name="AfterTool", tool_name="run_shell_command",
                         tool_response={"llmContent": out}, turn_id="t1"))  # Gemini + Codex

bad = 0
for i, p in enumerate(payloads):
    env = dict(os.environ, HOME=home, OMNI_HOME=oh)
    t0 = time.time()
    try:
        r = subprocess.run([hook], input=json.dumps(p).encode(), capture_output=True, env=env, timeout=8)
    except subprocess.TimeoutExpired:
        print(f"payload {i}: HANG past 8 s (transcript {p['transcript_path'][:60]!r})"); bad += 1; continue
    dt = time.time() - t0
    both = r.stdout + r.stderr
    if r.returncode != 0:
        print(f"payload {i}: exit {r.returncode}"); bad += 1
    if tok.encode() in both or aws.encode() in both:
        print(f"payload {i}: CREDENTIAL printed"); bad += 1
    if dt > 5:
        print(f"payload {i}: took {dt:.1f} s (transcript {p['transcript_path'][:60]!r})"); bad += 1
for root, _, files in os.walk(oh):
    for f in files:
        try:
            if tok.encode() in open(os.path.join(root, f), "rb").read():
                print(f"CREDENTIAL in {os.path.join(root, f)}"); bad += 1
        except OSError:
            pass
print(f"{len(payloads)} payloads, {bad} problem(s); home {d}")
sys.exit(1 if bad else 0)
