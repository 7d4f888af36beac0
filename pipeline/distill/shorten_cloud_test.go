package distill_test

import "testing"

func TestCloudDistillers(t *testing.T) {
	cases := []dtCase{
		{name: "kubectl apply failing without an error line", cmd: "kubectl apply -f k8s/", exit: 1,
			in: dtRepeat("configmap/c%d unchanged\n", 12), raw: true},
		{name: "kubectl apply exiting 0 with an error line", cmd: "kubectl apply -f k8s/", exit: 0,
			in: dtRepeat("configmap/c%d unchanged\n", 12) + "error: unable to recognize \"k8s/x.yaml\": no matches for kind \"Foo\"\n", raw: true},
		{name: "kubectl delete keeps every result", cmd: "kubectl delete -f k8s/", exit: 0,
			in: dtRepeat("pod \"web-%d\" deleted\n", 12), raw: true},
		{name: "kubectl drain", cmd: "kubectl drain node-1 --ignore-daemonsets", exit: 0,
			in:        "node/node-1 cordoned\n" + dtRepeat("evicting pod shop/web-%d\n", 10) + dtRepeat("pod/web-%d evicted\n", 10) + "node/node-1 drained\n",
			distiller: "kubectl", keep: []string{"node/node-1 cordoned", "pod/web-7 evicted", "node/node-1 drained"}, gone: []string{"evicting pod"}},
		{name: "helm install --dry-run prints manifests", cmd: "helm install web ./chart --dry-run=client", exit: 0,
			in: "NAME: web\nLAST DEPLOYED: Sun Nov 29 10:00:00 2026\nNAMESPACE: default\nSTATUS: pending-install\nREVISION: 1\nMANIFEST:\n" +
				dtRepeat("  key%d: value\n", 20), raw: true},
		{name: "helm dependency update with remote repositories", cmd: "helm dependency update ./chart", exit: 0,
			in: "Hang tight while we grab the latest from your chart repositories...\n" +
				dtRepeat("...Successfully got an update from the \"repo%d\" chart repository\n", 8) +
				"Update Complete. ⎈Happy Helming!⎈\nSaving 2 charts\nDownloading postgresql from repo https://charts.example.com/\nDownloading redis from repo https://charts.example.com/\nDeleting outdated charts\n",
			distiller: "helm", keep: []string{"Update Complete. ⎈Happy Helming!⎈", "Saving 2 charts"}, gone: []string{"Successfully got an update", "Downloading redis"}},
		{name: "aws s3 meter on lines of its own", cmd: "aws s3 cp --recursive dist s3://b/dist", exit: 0,
			in: dtRepeat("Completed %d.0 KiB/40.0 KiB (1.0 MiB/s) with 3 file(s) remaining\n", 12) +
				"upload: dist/a.js to s3://b/dist/a.js\nupload: dist/b.js to s3://b/dist/b.js\nupload: dist/c.js to s3://b/dist/c.js\n",
			distiller: "aws", keep: []string{"upload: dist/a.js to s3://b/dist/a.js", "upload: dist/c.js to s3://b/dist/c.js"}, gone: []string{"Completed 7.0 KiB"}},
		{name: "aws s3 failing without a result", cmd: "aws s3 sync . s3://b", exit: 1, in: dtRepeat("something %d\n", 12), raw: true},
		{name: "gcloud storage cp meter", cmd: "gcloud storage cp -r dist gs://b", exit: 0,
			in:        dtRepeat("Copying file://dist/f%d.js to gs://b/dist/f.js\n", 3) + dtRepeat("  Completed files %d/3 | 12.0kiB/36.0kiB | 1.0MiB/s\n", 12) + "\nAverage throughput: 1.1MiB/s\n",
			distiller: "gcloud", keep: []string{"Copying file://dist/f2.js to gs://b/dist/f.js", "Average throughput"}, gone: []string{"Completed files 7/3"}},
		{name: "gcloud describe prints YAML", cmd: "gcloud run services describe web", exit: 0, in: dtRepeat("key%d: value\n", 12), raw: true},
		{name: "az without a result", cmd: "az group create -n rg -l westeurope", exit: 0, in: dtRepeat("text %d\n", 12), raw: true},
	}
	for _, c := range cases {
		c.run(t)
	}
}
