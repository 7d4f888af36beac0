// omni: Cline plugin. Written by `omni init --cline`; removed by
// `omni init --cline --uninstall`. Edits are overwritten by the next init.
//
// After each run_commands call it sends every command's result to
// `omni hook` as JSON and, when omni answers {"output": TEXT}, puts TEXT in
// place of that command's result; Cline then hands the model the call's
// entries (query, result, error, success) as before. Any problem (omni
// missing, slow, failing, an unexpected answer) leaves the result as it was.
// When Cline reports a finished compaction it tells omni (PostCompact), so
// nothing the model no longer holds is called "already shown".
import { spawn } from "node:child_process";

const OMNI = process.env.OMNI_BIN || "__OMNI_BIN__";
// Cline 3.0.65 gives a plugin hook 3 s; the answer must come before that.
const TIMEOUT_MS = Number(process.env.OMNI_HOOK_TIMEOUT_MS) || 2500;

// ask runs `omni hook` with payload on stdin and resolves to the text to
// deliver, or null to keep the original.
function ask(payload) {
  return new Promise((resolve) => {
    let out = "";
    let settled = false;
    const done = (v) => {
      if (!settled) {
        settled = true;
        resolve(v);
      }
    };
    let child;
    try {
      child = spawn(OMNI, ["hook"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return done(null);
    }
    const timer = setTimeout(() => {
      child.kill();
      done(null);
    }, TIMEOUT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      done(null);
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0 || out.trim() === "") return done(null);
      try {
        const r = JSON.parse(out);
        done(r && typeof r.output === "string" ? r.output : null);
      } catch {
        done(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

// compactions are the status notices Cline 3.0.65 sends when it has
// compacted a conversation (metadata.kind; phase "completed").
const compactions = new Set(["auto_compaction", "manual_compaction", "overflow_recovery_compaction"]);

export default {
  name: "omni",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    onEvent: async (ev) => {
      try {
        const md = ev?.metadata;
        const session = ev?.snapshot?.conversationId ?? ev?.snapshot?.agentId;
        if (ev?.type !== "status-notice" || md?.phase !== "completed" || typeof session !== "string") return;
        if (!compactions.has(md.kind ?? md.reason)) return;
        await ask({ host: "cline", hook_event_name: "PostCompact", session_id: session, cwd: process.cwd() });
      } catch {
        // A failed reset leaves the shown-set as it was.
      }
    },
    afterTool: async (ctx) => {
      try {
        const entries = ctx?.result?.output;
        if (ctx?.tool?.name !== "run_commands" || !Array.isArray(entries)) return undefined;
        const snap = ctx.snapshot ?? {};
        const session = snap.conversationId ?? snap.agentId;
        const id = ctx.toolCall?.toolCallId;
        if (typeof session !== "string" || typeof id !== "string") return undefined;
        let changed = false;
        const out = [];
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i];
          if (!e || typeof e.query !== "string" || typeof e.result !== "string" || typeof e.success !== "boolean") {
            out.push(e);
            continue;
          }
          const text = await ask({
            host: "cline",
            hook_event_name: "PostToolUse",
            session_id: session,
            // A subagent (an agent with a parent) reads with its own
            // shown-set.
            ...(snap.parentAgentId && typeof snap.agentId === "string" ? { agent_id: snap.agentId } : {}),
            tool_use_id: entries.length > 1 ? `${id}#${i}` : id,
            cwd: process.cwd(),
            tool_name: "run_commands",
            tool_input: { command: e.query },
            tool_response: { output: e.result, success: e.success },
          });
          if (text !== null && text !== e.result) {
            out.push({ ...e, result: text });
            changed = true;
          } else {
            out.push(e);
          }
        }
        return changed ? { result: { ...ctx.result, output: out } } : undefined;
      } catch {
        return undefined;
      }
    },
  },
};
