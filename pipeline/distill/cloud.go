package distill

import (
	"strconv"
	"strings"
)

// Cloud and infrastructure CLI distillers:
// kubectl (non-table output: apply, delete, rollout, wait, port-forward,
// …), helm (install, upgrade, lint, dependency, …), aws (s3 transfers,
// cloudformation deploy/package), gcloud and az. Tables (`kubectl get`,
// `helm list`) and list/describe calls are enumerations and never reach
// them; JSON and YAML results pass whole as structured payloads. What goes
// is progress (rollout waits, transfer meters, spinners, repository
// refreshes), duplicate client log lines, and resources `kubectl apply`
// left unchanged (counted in a marker). Every resource result, warning and
// error stays verbatim.

// The cloud and infrastructure distillers, by name.
var (
	dKubectl = &Distiller{"kubectl", distillKubectl}
	dHelm    = &Distiller{"helm", distillHelm}
	dAWS     = &Distiller{"aws", distillAWS}
	dGcloud  = &Distiller{"gcloud", distillGcloud}
	dAz      = &Distiller{"az", distillAz}
)

// pickCloudDistiller picks a cloud or infrastructure CLI's distiller.
func pickCloudDistiller(prog, sub string, rest []string) *Distiller {
	sub2, _ := subcommand(rest)
	switch prog {
	case "kubectl", "oc", "k":
		switch sub {
		case "apply", "create", "replace", "delete", "patch", "label", "annotate", "scale", "autoscale", "set",
			"wait", "port-forward", "drain", "cordon", "uncordon", "taint", "expose":
			return dKubectl
		case "rollout":
			switch sub2 {
			case "status", "restart", "undo", "pause", "resume":
				return dKubectl
			}
		}
	case "helm":
		switch sub {
		case "install", "upgrade", "uninstall", "delete", "del", "rollback", "lint", "dependency", "dep", "package",
			"pull", "fetch", "push", "test":
			return dHelm
		}
	case "aws":
		switch sub {
		case "s3":
			switch sub2 {
			case "cp", "sync", "mv", "rm", "mb", "rb":
				return dAWS
			}
		case "cloudformation":
			switch sub2 {
			case "deploy", "package":
				return dAWS
			}
		}
	case "gcloud":
		if sub != "" && sub != "help" && sub != "info" && sub != "version" {
			return dGcloud
		}
	case "az":
		if sub != "" && sub != "find" && sub != "version" {
			return dAz
		}
	}
	return nil
}

// crSegments returns the last carriage-return segment of a line (what a
// terminal would show) and whether every non-blank segment satisfies
// progress.
func crSegments(t string, progress func(string) bool) (last string, allProgress bool) {
	allProgress = true
	seen := false
	for _, seg := range strings.Split(t, "\r") {
		s := strings.TrimSpace(seg)
		if s == "" {
			continue
		}
		seen = true
		last = s
		if !progress(s) {
			allProgress = false
		}
	}
	return last, allProgress && seen
}

// klogMessage returns the message of a Kubernetes client log line
// ("E1129 12:56:36.669394   31615 memcache.go:265] msg").
func klogMessage(t string) (string, bool) {
	if len(t) < 8 || !strings.ContainsRune("IWEF", rune(t[0])) || !isDigits(t[1:5]) || t[5] != ' ' {
		return "", false
	}
	k := strings.Index(t, "] ")
	if k < 0 {
		return "", false
	}
	return t[k+2:], true
}

// kubectlVerbs end a resource result line.
var kubectlVerbs = []string{" created", " configured", " unchanged", " deleted", " patched", " labeled", " annotated",
	" scaled", " autoscaled", " exposed", " replaced", " restarted", " paused", " resumed", " rolled back", " cordoned",
	" uncordoned", " drained", " evicted", " tainted", " untainted", " condition met", " updated", " successfully rolled out",
	" already cordoned", " already uncordoned", " already paused", " already resumed", " skipped rollback"}

// kubectlResult reports a resource result line: "deployment.apps/web
// configured", `pod "x" deleted`, "node/n1 cordoned (dry run)".
func kubectlResult(t string) bool {
	t = strings.TrimSuffix(strings.TrimSuffix(t, " (dry run)"), " (server dry run)")
	sp := strings.IndexByte(t, ' ')
	if sp <= 0 {
		return false
	}
	if !strings.Contains(t[:sp], "/") && !strings.HasPrefix(t[sp+1:], "\"") {
		return false
	}
	for _, v := range kubectlVerbs {
		if strings.HasSuffix(t, v) {
			return true
		}
	}
	// `pod "x" deleted from default namespace`
	return strings.Contains(t, "\" deleted from ")
}

// kubectlWaiting reports a rollout progress line.
func kubectlWaiting(t string) bool {
	return strings.HasPrefix(t, "Waiting for ") && containsAny(t, " rollout to finish", " spec update to be observed", " roll out to finish")
}

// distillKubectl: kubectl apply/create/delete/patch/scale/…, rollout
// status/restart/undo, wait, port-forward, drain and cordon. Keeps every
// resource result ("deployment.apps/web configured"), "successfully rolled
// out", "condition met", "Forwarding from", warnings and errors; drops
// rollout "Waiting for …" progress (the last one stays when the rollout
// did not finish), port-forward's "Handling connection for N", drain's
// "evicting pod" lines once the node is drained, repeated client log lines
// (the first of each message stays), and resources apply left unchanged,
// counted in a marker.
func distillKubectl(d *dctx) bool {
	verdict, failing, rolledOut, drained := false, false, false, false
	lastWait, unchanged, firstUnchanged := -1, 0, -1
	var seen map[string]bool
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		if msg, ok := klogMessage(t); ok {
			if seen == nil {
				seen = map[string]bool{}
			}
			if seen[msg] {
				d.drop(i)
			}
			seen[msg] = true
			continue
		}
		switch {
		case kubectlWaiting(t):
			d.drop(i)
			lastWait = i
		case strings.HasPrefix(t, "Handling connection for "):
			d.drop(i)
		case strings.HasPrefix(t, "evicting pod "):
			d.drop(i)
		case strings.HasPrefix(t, "Forwarding from "):
			verdict = true
		case kubectlResult(t):
			verdict = true
			if strings.HasSuffix(t, " successfully rolled out") {
				rolledOut = true
			}
			if strings.HasSuffix(t, " drained") {
				drained = true
			}
			if strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(t, " (dry run)"), " (server dry run)"), " unchanged") {
				d.drop(i)
				unchanged++
				if firstUnchanged < 0 {
					firstUnchanged = i
				}
			}
		case strings.HasPrefix(t, "error:") || strings.HasPrefix(t, "Error from server") || strings.HasPrefix(t, "Error: ") ||
			strings.HasPrefix(t, "The connection to the server") || strings.HasPrefix(t, "Unable to connect to the server") ||
			strings.HasPrefix(t, "timed out waiting for the condition"):
			verdict, failing = true, true
		}
	}
	if lastWait >= 0 && !rolledOut {
		d.keep[lastWait] = true
	}
	if !drained {
		for i := 0; i < d.n(); i++ {
			if strings.HasPrefix(d.plain(i), "evicting pod ") {
				d.keep[i] = true
			}
		}
	}
	if unchanged > 0 {
		d.insert(firstUnchanged, "[OMNI: "+strconv.Itoa(unchanged)+" unchanged resources not shown]")
	}
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict && !failing
}

// helmDebug reports a --debug log line ("install.go:214: [debug] …").
func helmDebug(t string) bool {
	k := strings.Index(t, ": [debug] ")
	if k <= 0 {
		return false
	}
	_, ok := diagLocation(t[:k+1] + " ")
	return ok
}

// distillHelm: helm install/upgrade/uninstall/rollback/test, lint,
// dependency update/build, package, pull and push. Keeps the release
// summary (NAME, LAST DEPLOYED, NAMESPACE, STATUS, REVISION, NOTES), every
// lint message and its tally, warnings and errors; drops repository
// refresh chatter ("Hang tight…", "…Successfully got an update from…",
// "Downloading x from repo y", "Deleting outdated charts") and, on a run
// that succeeded, --debug log lines.
func distillHelm(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.HasPrefix(t, "Error: ") || strings.HasPrefix(t, "[ERROR]"):
			verdict, failing = true, true
		case strings.HasPrefix(t, "STATUS: "):
			verdict = true
			if containsAny(t, "failed", "pending") {
				failing = true
			}
		case strings.Contains(t, " chart(s) linted"):
			verdict = true
			if n, ok := countBefore(t, " chart(s) failed"); ok && n > 0 {
				failing = true
			}
		case strings.Contains(t, "Happy Helming") || strings.HasSuffix(t, " uninstalled") || strings.HasPrefix(t, "Successfully packaged chart") ||
			strings.HasPrefix(t, "Pushed: ") || strings.HasPrefix(t, "Pulled: ") || strings.HasPrefix(t, "Saving ") && strings.HasSuffix(t, " charts"):
			verdict = true
		case strings.HasPrefix(t, "Phase:"):
			verdict = true
			if strings.Contains(t, "Failed") {
				failing = true
			}
		case strings.HasPrefix(t, "Hang tight while we grab the latest"), strings.HasPrefix(t, "...Successfully got an update from the"),
			strings.HasPrefix(t, "Getting updates for unmanaged Helm repositories"), strings.HasPrefix(t, "Deleting outdated charts"),
			strings.HasPrefix(t, "Downloading ") && strings.Contains(t, " from repo "):
			d.drop(i)
		case d.exit == 0 && helmDebug(t):
			d.drop(i)
		}
	}
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict && !failing
}

// awsProgress reports a transfer meter segment: "Completed 1.0 MiB/25.3 MiB
// (2.1 MiB/s) with 3 file(s) remaining", "Completed 3 of 9 part(s) with 1
// file(s) remaining", or cloudformation package's "Uploading to x  1234 /
// 1234.0  (100.00%)".
func awsProgress(s string) bool {
	if strings.HasPrefix(s, "Completed ") && strings.HasSuffix(s, " remaining") {
		return true
	}
	return strings.HasPrefix(s, "Uploading to ") && strings.HasSuffix(s, "%)")
}

// distillAWS: aws s3 cp/sync/mv/rm/mb/rb and aws cloudformation
// deploy/package (every other aws call prints JSON, a table or text that
// is its answer). Keeps every "upload:"/"download:"/"copy:"/"delete:"
// result, "(dryrun)" lines, the stack results and every error; drops the
// transfer meter and upload percentages. Its verdict is a result line or
// an error.
func distillAWS(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		last, progress := crSegments(d.plain(i), awsProgress)
		switch {
		case progress:
			d.drop(i)
		case hasPrefixAny(last, "upload: ", "download: ", "copy: ", "move: ", "delete: ", "make_bucket: ", "remove_bucket: ", "(dryrun) "):
			verdict = true
		case hasPrefixAny(last, "Successfully created/updated stack", "Successfully packaged artifacts", "No changes to deploy."):
			verdict = true
		case hasPrefixAny(last, "upload failed: ", "download failed: ", "copy failed: ", "move failed: ", "delete failed: ",
			"make_bucket failed: ", "remove_bucket failed: ", "fatal error: ", "An error occurred (", "Unable to locate credentials",
			"aws: error: ", "Failed to create/update the stack", "Could not connect to the endpoint URL", "Error parsing parameter"):
			verdict, failing = true, true
		}
	}
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict && !failing
}

// gcloudProgress reports a storage transfer meter: "Completed files 3/10 |
// 1.2MiB/4.0MiB | 2.1MiB/s" or gsutil's "/ [1 files][  1.2 KiB/  1.2 KiB]".
func gcloudProgress(s string) bool {
	if strings.HasPrefix(s, "Completed files ") {
		return true
	}
	if len(s) > 3 && strings.ContainsRune(`/-\|`, rune(s[0])) && s[1] == ' ' && s[2] == '[' && strings.Contains(s, " files][") {
		return true
	}
	return false
}

// distillGcloud: gcloud commands that change things (deploy, create,
// update, delete, storage cp, builds submit, container clusters
// get-credentials, …). Keeps the operation lines and their "done", the
// result ("Done.", "Created [", "Updated [", "Deleted [", "has been
// deployed", "Service URL:", "kubeconfig entry generated"), warnings and
// errors; drops storage transfer meters. Its verdict is a result line or
// an "ERROR:" line.
func distillGcloud(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		last, progress := crSegments(d.plain(i), gcloudProgress)
		switch {
		case progress:
			d.drop(i)
		case strings.HasPrefix(last, "ERROR:"):
			verdict, failing = true, true
		case last == "Done." || hasPrefixAny(last, "Created [", "Updated [", "Deleted [", "Updated property [", "Unset property [",
			"Service URL: ", "kubeconfig entry generated", "Operation completed over ", "Waiting for operation [") ||
			strings.Contains(last, " has been deployed") || strings.HasPrefix(last, "Copying ") && strings.Contains(last, " to "):
			verdict = true
		}
	}
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict && !failing
}

// azSpinner reports az's progress spinner segment: "- Running ..", "\
// Starting ..", "| Finished ..".
func azSpinner(s string) bool {
	if len(s) < 3 || !strings.ContainsRune(`/-\|`, rune(s[0])) || s[1] != ' ' {
		return false
	}
	r := strings.TrimRight(s[2:], ". ")
	return r == "Running" || r == "Starting" || r == "Finished"
}

// distillAz: az commands. Their results are JSON, tables or TSV, which
// stay whole; this drops only the progress spinner lines of long-running
// operations ("- Running .."). Its verdict is the result document (a line
// opening JSON), a finished spinner, or an "ERROR:" line.
func distillAz(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		last, progress := crSegments(d.plain(i), azSpinner)
		switch {
		case progress:
			d.drop(i)
			if strings.HasPrefix(last[2:], "Finished") {
				verdict = true
			}
		case strings.HasPrefix(last, "ERROR:") || strings.HasPrefix(last, "(") && strings.Contains(last, ") ") && d.exit != 0:
			verdict, failing = true, true
		case last == "{" || last == "[" || strings.HasPrefix(last, "{\"") || strings.HasPrefix(last, "[{"):
			verdict = true
		}
	}
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict && !failing
}
