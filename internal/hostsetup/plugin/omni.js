// omni: OpenCode plugin shim. Written by `omni init --opencode`; removed by
// `omni init --opencode --uninstall`. Edits are overwritten by the next init.
//
// After each tool call it sends the result to `omni hook` as JSON and, when
// omni answers {"output": TEXT}, assigns TEXT to the result, which OpenCode
// then hands to the model. Any problem (omni missing, slow, failing, an
// unexpected answer) leaves the result as it was.
import { spawn } from "node:child_process";

const OMNI = process.env.OMNI_BIN || "__OMNI_BIN__";
const TOOLS = new Set(["bash", "read", "grep", "glob", "list", "webfetch"]);
const TIMEOUT_MS = Number(process.env.OMNI_HOOK_TIMEOUT_MS) || 5000;

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

export const OmniPlugin = async ({ directory }) => ({
  "tool.execute.after": async (input, output) => {
    if (!TOOLS.has(input?.tool) || typeof output?.output !== "string") return;
    const response = { output: output.output };
    const exit = output.metadata?.exit;
    if (typeof exit === "number") response.exit = exit;
    const text = await ask({
      host: "opencode",
      hook_event_name: "PostToolUse",
      session_id: input.sessionID,
      tool_use_id: input.callID,
      cwd: directory,
      tool_name: input.tool,
      tool_input: input.args ?? {},
      tool_response: response,
    });
    if (text !== null) output.output = text;
  },
  event: async ({ event }) => {
    if (event?.type === "session.compacted" && event.properties?.sessionID) {
      await ask({
        host: "opencode",
        hook_event_name: "PostCompact",
        session_id: event.properties.sessionID,
        cwd: directory,
      });
    }
  },
});
