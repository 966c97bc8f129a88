"""deploy/k8s checked offline: documents parse and have their required fields; names, labels
and ports agree across the DaemonSet, Services, CronJob and ServiceMonitor and with the daemon's
own flags; the pods meet Pod Security "restricted" (the clock-lock overlay aside); the daemon
starts with exactly the DaemonSet's arguments and the ConfigMap's configuration (TLS and tokens
as the Secrets give them) and answers a client over TLS with a token; the nightly job reaches
every daemon; the clock-lock overlay grants SYS_ADMIN to a root daemon and nothing else, the
volume-claim overlay puts the nightly reports on a claim, the restricted overlay the database on
an emptyDir. A configuration change keeps every node's database: it changes no pod template
(no roll), the reloader sidecar makes the daemon reload it, the database is on the node, and a
pod that ends drains its fleet outbox first. No cluster is needed: kubeconform and kubeval
are not packaged in Debian, so API schemas are not checked (deploy/k8s/README.md)."""

import os
import pathlib
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import tomllib
import urllib.error
import urllib.request

import pytest
import yaml

ROOT = pathlib.Path(os.environ.get("ABLATION_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
K8S = ROOT / "deploy" / "k8s"
BASE = K8S / "base"
OVERLAY = K8S / "overlays" / "clock-lock"
CLAIM_OVERLAY = K8S / "overlays" / "volume-claim"

API_VERSIONS = {
    "Namespace": "v1",
    "Service": "v1",
    "DaemonSet": "apps/v1",
    "CronJob": "batch/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "Kustomization": "kustomize.config.k8s.io/v1beta1",
    "PersistentVolumeClaim": "v1",
    "PrometheusRule": "monitoring.coreos.com/v1",
}


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def objects():
    """{(kind, name): object} of the base and the ServiceMonitor."""
    out = {}
    for path in sorted(BASE.glob("*.yaml")) + [K8S / "prometheus" / "servicemonitor.yaml"]:
        for d in load(path):
            if d["kind"] != "Kustomization":
                out[(d["kind"], d["metadata"]["name"])] = d
    return out


def one(kind, name=None):
    found = [o for (k, n), o in objects().items() if k == kind and (name is None or n == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container(workload, name=None):
    spec = workload["spec"]
    pod = spec["jobTemplate"]["spec"]["template"] if workload["kind"] == "CronJob" else spec["template"]
    containers = pod["spec"]["containers"]
    return pod, next(c for c in containers if name is None or c["name"] == name)


# The daemon's flags that take no value.
BARE_FLAGS = {"--metrics-allow-remote"}


def flags(args):
    """{--flag: value} of an argument list of --flag value pairs (True for a bare flag)."""
    out, i = {}, 0
    while i < len(args):
        assert args[i].startswith("--"), args
        if args[i] in BARE_FLAGS:
            out[args[i]] = True
            i += 1
        else:
            out[args[i]] = args[i + 1]
            i += 2
    return out


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def added_capabilities(node):
    """Every capabilities.add list anywhere below `node`."""
    if isinstance(node, dict):
        if isinstance(node.get("capabilities"), dict) and "add" in node["capabilities"]:
            yield node["capabilities"]["add"]
        for value in node.values():
            yield from added_capabilities(value)
    elif isinstance(node, list):
        for value in node:
            yield from added_capabilities(value)


def subset(small, big):
    return all(big.get(k) == v for k, v in small.items())


def test_every_document_has_its_required_fields():
    paths = sorted(p for p in K8S.rglob("*.yaml")
                   if p.name not in ("scrape-config.yaml", "rules-test.yaml"))
    assert len(paths) >= 8
    for path in paths:
        for d in load(path):
            where = f"{path.relative_to(ROOT)}"
            assert d.get("kind") in API_VERSIONS, f"{where}: unknown kind {d.get('kind')}"
            assert d.get("apiVersion") == API_VERSIONS[d["kind"]], f"{where}: apiVersion of {d['kind']}"
            if d["kind"] != "Kustomization":
                assert d.get("metadata", {}).get("name"), f"{where}: metadata.name"
                # An overlay's Namespace patch carries labels only.
                assert d.get("spec") or d["kind"] == "Namespace", f"{where}: spec"


def test_the_base_kustomization_lists_every_file_and_the_namespace():
    k = load(BASE / "kustomization.yaml")[0]
    listed = set(k["resources"])
    assert listed == {p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml"}
    (config,) = k["configMapGenerator"]
    assert config["name"] == "ablationd-config"
    # No content hash in its name: an edit must not change the pod template (a roll).
    assert config["options"]["disableNameSuffixHash"] is True
    for f in config["files"]:
        with open(BASE / f, "rb") as toml_file:
            tomllib.load(toml_file)  # the daemon's configuration parses
    assert one("Namespace")["metadata"]["name"] == k["namespace"]
    images = {i["name"] for i in k["images"]}
    for kind in ("DaemonSet", "CronJob"):
        assert container(one(kind))[1]["image"].split(":")[0] in images


def test_the_daemonset_runs_on_the_gpu_nodes_an_operator_opts_in():
    ds = one("DaemonSet", "ablationd")
    pod, c = container(ds, "ablationd")
    assert subset(ds["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
    assert pod["spec"]["nodeSelector"] == {"ablationd.io/enabled": "true"}
    assert any(t["key"] == "nvidia.com/gpu" for t in pod["spec"]["tolerations"])
    assert int(c["resources"]["limits"]["nvidia.com/gpu"]) >= 1
    assert "utility" in next(e["value"] for e in c["env"] if e["name"] == "NVIDIA_DRIVER_CAPABILITIES")


def test_the_daemonsets_flags_are_the_daemons_and_its_ports_agree():
    ds = one("DaemonSet", "ablationd")
    pod, c = container(ds, "ablationd")
    args = flags(c["args"])
    help_text = subprocess.run([os.environ["ABLATIOND"], "--help"], capture_output=True, text=True,
                               check=True).stdout
    for flag in args:
        assert re.search(rf"(^|\s|,){re.escape(flag)}\b", help_text), f"ablationd has no {flag}"
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    # Reachable from the kubelet's probes and the Services: not loopback.
    assert args["--listen"] == f"0.0.0.0:{ports['grpc']}"
    assert args["--metrics-listen"] == f"0.0.0.0:{ports['metrics']}"
    assert args["--metrics-allow-remote"] is True  # refused without it, on purpose here
    # The kubelet's grpc probes cannot speak TLS, its HTTP probes carry no token: /healthz.
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}, probe
    # A memory limit, so that the node's OOM killer never chooses for the daemon.
    assert c["resources"]["limits"]["memory"].endswith("Gi")
    # The database (and its WAL and clock journal beside it) on the node: it outlives the pod.
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    db_dir = os.path.dirname(args["--db"])
    assert db_dir in mounts, f"--db {args['--db']}: {db_dir} is not mounted"
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts[db_dir])
    assert volume["hostPath"] == {"path": "/var/lib/ablationd", "type": "Directory"}
    # The configuration from the ConfigMap, TLS and tokens from Secrets, at the paths it names.
    config_dir = os.path.dirname(args["--config"])
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes[mounts[config_dir]]["configMap"]["name"] == "ablationd-config"
    with open(BASE / "ablationd.toml", "rb") as f:
        config = tomllib.load(f)
    for path, secret in ((config["tls"]["cert"], "ablationd-tls"),
                         (config["tls"]["key"], "ablationd-tls"),
                         (config["auth"]["tokens"], "ablationd-tokens")):
        mounted = mounts[os.path.dirname(path)]
        assert volumes[mounted]["secret"]["secretName"] == secret, path
    # Observe-only by default; the root filesystem is read-only, /tmp is not.
    sc = c["securityContext"]
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True and "/tmp" in mounts
    assert not list(added_capabilities(objects())), "the base adds a capability"


def test_the_fleet_database_comes_from_an_optional_secret_never_from_the_manifests():
    _, c = container(one("DaemonSet", "ablationd"), "ablationd")
    (env,) = [e for e in c["env"] if e["name"] == "ABLATION_FLEET_DB"]
    assert "value" not in env, "a connection string may hold a password: only from a Secret"
    ref = env["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "ablationd-fleet-db", "key": "conninfo", "optional": True}
    with open(BASE / "ablationd.toml", "rb") as f:
        fleet = tomllib.load(f)["fleet"]
    assert "db" not in fleet and "db_file" not in fleet
    assert 1 <= fleet["retry_max_seconds"] <= 3600


def test_the_services_select_the_daemon_and_name_its_ports():
    ds = one("DaemonSet", "ablationd")
    pod, c = container(ds, "ablationd")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    services = {n: o for (k, n), o in objects().items() if k == "Service"}
    assert set(services) == {"ablationd", "ablationd-local", "ablationd-metrics", "ablationd-pods"}
    for name, svc in services.items():
        assert subset(svc["spec"]["selector"], pod["metadata"]["labels"]), name
        for p in svc["spec"]["ports"]:
            assert p["targetPort"] in ports, f"{name}: targetPort {p['targetPort']}"
            assert p["port"] == ports[p["targetPort"]], f"{name}: port {p['name']}"
    assert services["ablationd-local"]["spec"]["internalTrafficPolicy"] == "Local"
    assert services["ablationd-metrics"]["spec"]["clusterIP"] == "None"
    assert services["ablationd-pods"]["spec"]["clusterIP"] == "None"
    assert services["ablationd-pods"]["spec"]["publishNotReadyAddresses"] is True


def test_the_cronjob_is_the_nightly_job_against_every_daemon():
    cj = one("CronJob", "ablationd-nightly")
    pod, c = container(cj)
    ds_pod, ds_c = container(one("DaemonSet", "ablationd"), "ablationd")
    assert len(cj["spec"]["schedule"].split()) == 5
    assert cj["spec"]["concurrencyPolicy"] == "Forbid"
    assert cj["spec"]["jobTemplate"]["spec"]["backoffLimit"] == 0
    assert pod["spec"]["restartPolicy"] == "Never"
    assert c["image"] == ds_c["image"]
    assert "nodeSelector" not in pod["spec"], "it needs no GPU node: it reaches every daemon"
    # The bundle installs deploy/nightly-fleet.sh as bin/ablationd-nightly-fleet, beside
    # ablationd-nightly (deploy/nightly.sh) and the client.
    assert c["command"] == ["/opt/ablationd/bin/ablationd-nightly-fleet"]
    bundle = (ROOT / "deploy" / "make-bundle.sh").read_text()
    assert 'install -m 0755 "$here/nightly-fleet.sh" "$out/bin/ablationd-nightly-fleet"' in bundle
    assert 'install -m 0755 "$here/nightly.sh" "$out/bin/ablationd-nightly"' in bundle
    env = {e["name"]: e.get("value") for e in c["env"]}
    # The Pushgateway's address comes from an optional ConfigMap: the job runs without one.
    gateway = next(e for e in c["env"] if e["name"] == "PUSHGATEWAY_URL")["valueFrom"]
    assert gateway["configMapKeyRef"]["optional"] is True
    read = set()
    for script in ("nightly.sh", "nightly-fleet.sh"):
        read |= set(re.findall(r"\$\{?([A-Z_]+)", (ROOT / "deploy" / script).read_text()))
    client_env = {"ABLATION_TLS", "ABLATION_CA", "ABLATION_TLS_SERVER_NAME", "ABLATION_TOKEN_FILE"}
    assert set(env) <= read | client_env, f"settings nobody reads: {set(env) - read - client_env}"
    pods = one("Service", "ablationd-pods")
    assert env["ABLATION_PODS"] == "ablationd-pods"
    assert int(env["ABLATION_PORT"]) == next(p["port"] for p in pods["spec"]["ports"] if p["name"] == "grpc")
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    assert env["REPORT_DIR"] in mounts
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    ca = volumes[mounts[os.path.dirname(env["ABLATION_CA"])]]["secret"]
    assert ca["secretName"] == "ablationd-tls"
    assert ca["items"] == [{"key": "tls.crt", "path": "tls.crt"}], "the certificate, never the key"
    assert volumes[mounts[os.path.dirname(env["ABLATION_TOKEN_FILE"])]]["secret"]["secretName"] == \
        "ablationd-nightly-token"
    assert re.fullmatch(r"[0-9]*\.?[0-9]+%?", env["THRESHOLD"])  # what nightly.sh accepts
    with open(ROOT / "deploy" / "presets.toml", "rb") as f:
        assert env["PRESET"] in tomllib.load(f), f"preset {env['PRESET']} is not in deploy/presets.toml"


RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}


def restricted_violations(pod_spec):
    """What in a pod spec Pod Security "restricted" refuses (the checks of its policy)."""
    out = []
    psc = pod_spec.get("securityContext", {})
    for v in pod_spec.get("volumes", []):
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"volume {v['name']}: {kinds - RESTRICTED_VOLUMES}")
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(key):
            out.append(key)
    for c in pod_spec.get("containers", []) + pod_spec.get("initContainers", []):
        sc = c.get("securityContext", {})
        if sc.get("privileged"):
            out.append(f"{c['name']}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{c['name']}: allowPrivilegeEscalation is not false")
        if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True):
            out.append(f"{c['name']}: runAsNonRoot is not true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            out.append(f"{c['name']}: runAsUser 0")
        seccomp = sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{c['name']}: seccompProfile {seccomp}")
        caps = sc.get("capabilities", {})
        if caps.get("drop") != ["ALL"]:
            out.append(f"{c['name']}: capabilities not all dropped")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            out.append(f"{c['name']}: adds {caps['add']}")
        for p in c.get("ports", []):
            if p.get("hostPort"):
                out.append(f"{c['name']}: hostPort")
    return out


# The one thing of the base that "restricted" (and "baseline") refuses: each node's database on
# the node (namespace.yaml says why; overlays/restricted has none).
NODE_DATABASE = "volume db: {'hostPath'}"


def test_the_base_meets_pod_security_restricted_but_the_node_database_and_warns_at_it():
    pod, _ = container(one("DaemonSet"))
    assert restricted_violations(pod["spec"]) == [NODE_DATABASE]
    pod, _ = container(one("CronJob"))
    assert restricted_violations(pod["spec"]) == []
    labels = one("Namespace")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    # Whatever else strays from "restricted" is warned about at apply time and audited.
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    assert labels["pod-security.kubernetes.io/audit"] == "restricted"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, seconds, what):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds} s (last error: {last})")


class PodHere:
    """The DaemonSet's pod on this machine: every mount a folder of `tmp` of its own, made as the
    volumes would be (the TLS Secret a certificate made with openssl, the tokens Secret a token's
    hash made with --hash-token, the ConfigMap's ablationd.toml as it is, its paths mapped), and
    the daemon's args as the manifest has them with free ports (ctest runs tests side by side)."""

    TOKEN = "k8s-test-token-0123456789abcdef"

    def __init__(self, tmp):
        self.tmp = tmp
        self.pod, c = container(one("DaemonSet", "ablationd"), "ablationd")
        # Every mount to a folder of its own, longest path first so nested ones map right.
        mounts = sorted(((m["mountPath"], tmp / m["name"]) for m in c["volumeMounts"]),
                        key=lambda m: -len(m[0]))
        for _, folder in mounts:
            folder.mkdir()
        # One pass, longest mount first: a folder made under /tmp must not be mapped again.
        self._pattern = re.compile("|".join(re.escape(path) for path, _ in mounts) + r"(?=/|\b|$)")
        self.folders = dict(mounts)
        tls = self.folders["/etc/ablationd/tls"]
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        str(tls / "tls.key"), "-out", str(tls / "tls.crt"), "-days", "1",
                        "-subj", "/CN=ablationd", "-addext",
                        "subjectAltName=DNS:ablationd,DNS:ablationd.ablationd.svc"],
                       check=True, capture_output=True)
        self.ca = tls / "tls.crt"
        line = subprocess.run([os.environ["ABLATIOND"], "--hash-token", "nightly:run"],
                              input=self.TOKEN, capture_output=True, text=True, check=True).stdout
        (self.folders["/etc/ablationd/tokens"] / "tokens").write_text(line)
        self.config = self.folders["/etc/ablationd/config"] / "ablationd.toml"
        self.config.write_text(self.local((BASE / "ablationd.toml").read_text()))
        self.grpc_port, self.metrics_port = free_port(), free_port()
        self.args = [self.local(a) for a in c["args"]]
        self.args[self.args.index("0.0.0.0:50051")] = f"0.0.0.0:{self.grpc_port}"
        self.args[self.args.index("0.0.0.0:9464")] = f"0.0.0.0:{self.metrics_port}"
        self.log_path = tmp / "ablationd.log"

    def local(self, text):
        return self._pattern.sub(lambda m: str(self.folders[m.group(0)]), text)

    def start(self, *extra_args):
        self._log = open(self.log_path, "w")
        self.daemon = subprocess.Popen([os.environ["ABLATIOND"], *self.args, *extra_args],
                                       stdout=self._log,
                                       stderr=subprocess.STDOUT,
                                       env={**os.environ, "TMPDIR": str(self.folders["/tmp"])})
        return self.daemon

    def log(self):
        return self.log_path.read_text()

    def client(self, *args, token=True):
        """ablation-client as the nightly job calls it: by IP, TLS checked against the Service's
        name, with its token (or without)."""
        env = {**os.environ, "ABLATION_TLS": "1", "ABLATION_CA": str(self.ca),
               "ABLATION_TLS_SERVER_NAME": "ablationd"}
        if token:
            token_file = self.tmp / "nightly.token"
            token_file.write_text(self.TOKEN + "\n")
            env["ABLATION_TOKEN_FILE"] = str(token_file)
        return subprocess.run([os.environ["ABLATION_CLIENT"], "--server",
                               f"127.0.0.1:{self.grpc_port}", *args], env=env,
                              capture_output=True, text=True)

    def wait_until_serving(self):
        def metrics_answer():
            assert self.daemon.poll() is None, "ablationd exited: " + self.log()
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/healthz",
                                        timeout=2) as r:
                return r.status == 200

        wait_for(metrics_answer, 60, "the metrics endpoint (the probes) answers")

    def stop(self):
        """SIGTERM, as the kubelet sends it; the exit status (the daemon killed after the pod's
        grace period fails the test)."""
        self.daemon.send_signal(signal.SIGTERM)
        try:
            return self.daemon.wait(timeout=self.pod["spec"]["terminationGracePeriodSeconds"])
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            raise
        finally:
            self._log.close()


def test_the_daemon_starts_with_exactly_the_manifests_arguments_and_configuration():
    """The DaemonSet's args and the ConfigMap's ablationd.toml as they are; only the mount paths
    are this machine's folders (made as the volumes would be: the Secrets' files, the ConfigMap's
    file) and the ports free ones (ctest runs tests side by side)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        here = PodHere(tmp)
        token, tls, metrics_port, grpc_port = here.TOKEN, here.ca.parent, here.metrics_port, here.grpc_port
        daemon = here.start()
        status = None
        try:
            # The probes' answer: the metrics endpoint serves.
            here.wait_until_serving()
            # /metrics itself needs a token of this daemon (it has tokens).
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2)
            assert refused.value.code == 401
            request = urllib.request.Request(f"http://127.0.0.1:{metrics_port}/metrics",
                                             headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=2) as r:
                assert r.status == 200
            assert daemon.poll() is None, here.log()
            # TLS on the gRPC listener, with the certificate the Service's name verifies.
            context = ssl.create_default_context(cafile=str(tls / "tls.crt"))
            context.set_alpn_protocols(["h2"])
            with socket.create_connection(("127.0.0.1", grpc_port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="ablationd") as conn:
                    assert conn.selected_alpn_protocol() == "h2"
            # As the nightly job calls it: by IP, TLS checked against the Service's name.
            done = here.client("runs")
            assert done.returncode == 0, done.stderr
            refused = here.client("runs", token=False)
            # Without a token: refused (anonymous callers may do nothing).
            assert refused.returncode != 0, refused.stdout
            assert re.search(r"UNAUTHENTICATED|PERMISSION_DENIED", refused.stderr), refused.stderr
        finally:
            status = here.stop()
        assert status == 0, here.log()


def test_the_manifests_keep_the_database_across_a_config_change():
    """What makes a configuration edit keep every node's database, as the manifests say it: the
    pod template names no content hash (the ConfigMap's name is stable), a sidecar reloads the
    daemon from the file its --config names (one PID namespace, so it can signal it), the
    database is on the node, and a pod that ends drains its fleet outbox within its grace."""
    k = load(BASE / "kustomization.yaml")[0]
    assert k["configMapGenerator"][0]["options"]["disableNameSuffixHash"] is True
    pod, daemon = container(one("DaemonSet", "ablationd"), "ablationd")
    spec = pod["spec"]
    assert spec["shareProcessNamespace"] is True
    _, reloader = container(one("DaemonSet", "ablationd"), "config-reloader")
    assert reloader["image"] == daemon["image"]
    assert reloader["command"] == ["/opt/ablationd/bin/ablationd-config-reloader"]
    args = flags(daemon["args"])
    assert reloader["args"][0] == args["--config"], "it tells the daemon whose --config it watches"
    with open(BASE / "ablationd.toml", "rb") as f:
        assert tomllib.load(f)["auth"]["tokens"] in reloader["args"]  # the tokens reload too
    watched = {m["mountPath"]: m["name"] for m in reloader["volumeMounts"]}
    for path in reloader["args"]:
        assert os.path.dirname(path) in watched, f"{path} is not mounted in the reloader"
    assert restricted_violations({"containers": [reloader],
                                  "securityContext": spec["securityContext"]}) == []
    volumes = {v["name"]: v for v in spec["volumes"]}
    db = {m["mountPath"]: m["name"] for m in daemon["volumeMounts"]}[os.path.dirname(args["--db"])]
    assert volumes[db]["hostPath"]["path"] == os.path.dirname(args["--db"])
    # Drained before SIGTERM, with time left within the grace period for the daemon's own stop.
    drain = daemon["lifecycle"]["preStop"]["exec"]["command"]
    assert drain[0] == "/opt/ablationd/bin/ablationd-drain-outbox"
    assert drain[drain.index("--db") + 1] == args["--db"]
    assert float(drain[drain.index("--seconds") + 1]) + 30 <= spec["terminationGracePeriodSeconds"]
    bundle = (ROOT / "deploy" / "make-bundle.sh").read_text()
    assert 'install -m 0755 "$here/config-reloader.sh" "$out/bin/ablationd-config-reloader"' in bundle
    assert 'install -m 0755 "$here/drain-outbox.py" "$out/bin/ablationd-drain-outbox"' in bundle


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl here to run kustomize")
def test_a_config_edit_changes_no_pod_template(tmp_path):
    """kustomize before and after an edit of ablationd.toml: the ConfigMap's data changes, the
    DaemonSet does not, so nothing rolls (a hashed name would have changed its template)."""
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy)
    before = kustomize(copy / "base")
    toml = copy / "base" / "ablationd.toml"
    toml.write_text(toml.read_text().replace('regime = "sustained"', 'regime = "burst"'))
    after = kustomize(copy / "base")
    assert before[("ConfigMap", "ablationd-config")] != after[("ConfigMap", "ablationd-config")]
    assert 'regime = "burst"' in after[("ConfigMap", "ablationd-config")]["data"]["ablationd.toml"]
    assert before[("DaemonSet", "ablationd")] == after[("DaemonSet", "ablationd")]


def replace_like_the_kubelet(path, text):
    """A mounted ConfigMap's update: the new file written aside, then moved over at once."""
    fresh = path.with_name(".new-" + path.name)
    fresh.write_text(text)
    os.replace(fresh, path)


def test_a_config_change_reloads_the_running_daemon_and_keeps_its_database():
    """The daemon with the DaemonSet's arguments and the reloader sidecar's, as in the pod: a run
    stored, then the ConfigMap's file changed. The reloader sends SIGHUP, the same daemon (its
    pid) applies the change, and the run is still there: nothing restarted, nothing lost."""
    _, reloader = container(one("DaemonSet", "ablationd"), "config-reloader")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        here = PodHere(tmp)
        # A GPU node's daemon: here the test double of the worker, so that a run is stored.
        daemon = here.start("--worker", os.environ["FAKE_WORKER"])
        sidecar_log = open(tmp / "reloader.log", "w")
        sidecar = subprocess.Popen(
            [str(ROOT / "deploy" / "config-reloader.sh"), "--interval", "0.2",
             *(here.local(a) for a in reloader["args"])],
            stdout=sidecar_log, stderr=subprocess.STDOUT)
        try:
            here.wait_until_serving()
            done = here.client("run", "--variant", "cublas_bf16", "--shape", "128")
            assert done.returncode == 0, done.stderr + here.log()
            replace_like_the_kubelet(here.config, here.config.read_text().replace(
                'regime = "sustained"', 'regime = "burst"'))
            wait_for(lambda: "timing.regime (sustained -> burst) applied" in here.log(), 30,
                     "the daemon applies the new configuration")
            assert daemon.poll() is None, here.log()
            assert "SIGHUP sent to ablationd (pid %d)" % daemon.pid in (tmp / "reloader.log").read_text()
            runs = here.client("runs")
            assert runs.returncode == 0, runs.stderr
            assert "succeeded" in runs.stdout and "cublas_bf16" not in runs.stderr, runs.stdout
        finally:
            sidecar.terminate()
            assert sidecar.wait(timeout=5) == 0  # SIGTERM ends it at once
            sidecar_log.close()
            status = here.stop()
        assert status == 0, here.log()
        # The run's outbox row is on the database's volume (no fleet database here): a pod that
        # ends with one waits for it up to the hook's limit and says so; without a fleet database
        # it waits for nothing.
        drain = [str(ROOT / "deploy" / "drain-outbox.py"), "--db", here.local("/var/lib/ablationd/results.db")]
        nothing = subprocess.run(drain, capture_output=True, text=True,
                                 env={k: v for k, v in os.environ.items() if k != "ABLATION_FLEET_DB"})
        assert nothing.returncode == 0 and "nothing to export" in nothing.stdout
        waited = subprocess.run([*drain, "--seconds", "1"], capture_output=True, text=True,
                                env={**os.environ, "ABLATION_FLEET_DB": "postgresql://fleet"})
        assert waited.returncode == 1
        assert "1 finished run(s) still wait in the outbox after 1 s" in waited.stderr


def test_the_drain_returns_once_the_outbox_is_empty(tmp_path):
    """The preStop hook against an outbox that empties while it waits (the exporter's deletes)."""
    import sqlite3
    import threading
    db = tmp_path / "results.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE fleet_outbox (run_id INTEGER PRIMARY KEY, enqueued_at_ms INTEGER, "
                  "attempts INTEGER, last_error TEXT)")
        c.executemany("INSERT INTO fleet_outbox VALUES (?, ?, 0, '')", [(1, 1), (2, 2)])

    def export():
        time.sleep(1.5)
        with sqlite3.connect(db) as c:
            c.execute("DELETE FROM fleet_outbox")

    exporter = threading.Thread(target=export)
    exporter.start()
    started = time.monotonic()
    done = subprocess.run([str(ROOT / "deploy" / "drain-outbox.py"), "--db", str(db), "--seconds", "30"],
                          capture_output=True, text=True,
                          env={**os.environ, "ABLATION_FLEET_DB": "postgresql://fleet"})
    exporter.join()
    assert done.returncode == 0, done.stderr
    assert "the outbox is empty (2 run(s) exported while waiting)" in done.stdout
    assert 1 < time.monotonic() - started < 10


def test_the_fleet_nightly_runs_once_per_daemon_and_exits_with_the_worst():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        stub = tmp / "nightly"
        # A stand-in for nightly.sh: records what it was given, exits as its daemon says.
        stub.write_text("#!/bin/sh\necho \"$ABLATION_SERVER $REPORT_DIR\" > \"$REPORT_DIR/given\"\n"
                        "case $ABLATION_SERVER in *:2) echo regression; exit 1 ;; esac\n"
                        "echo fine\n")
        stub.chmod(0o755)
        env = {**os.environ, "NIGHTLY": str(stub), "REPORT_DIR": str(tmp / "reports"),
               "ABLATION_SERVERS": "10.0.0.1:1 10.0.0.2:2 10.0.0.3:3"}
        done = subprocess.run([str(ROOT / "deploy" / "nightly-fleet.sh")], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 1, done.stdout + done.stderr
        for server in ("10.0.0.1:1", "10.0.0.2:2", "10.0.0.3:3"):
            given = (tmp / "reports" / server.replace(":", "_") / "given").read_text().split()
            assert given == [server, str(tmp / "reports" / server.replace(":", "_"))]
        assert "3 daemon(s)" in done.stdout
        # Nobody to check: the job could not be done.
        env["ABLATION_SERVERS"] = ""
        env["ABLATION_PODS"] = "no-such-service.invalid"
        assert subprocess.run([str(ROOT / "deploy" / "nightly-fleet.sh")], env=env,
                              capture_output=True).returncode == 2


def test_the_servicemonitor_scrapes_the_metrics_port_of_one_service():
    sm = one("ServiceMonitor", "ablationd")
    namespace = load(BASE / "kustomization.yaml")[0]["namespace"]
    assert sm["metadata"]["namespace"] == namespace
    assert sm["spec"]["namespaceSelector"]["matchNames"] == [namespace]
    selected = [o for (k, n), o in objects().items()
                if k == "Service" and subset(sm["spec"]["selector"]["matchLabels"], o["metadata"]["labels"])]
    assert [s["metadata"]["name"] for s in selected] == ["ablationd"]  # each pod scraped once
    names = {p["name"] for p in selected[0]["spec"]["ports"]}
    for endpoint in sm["spec"]["endpoints"]:
        assert endpoint["port"] in names and endpoint["path"] == "/metrics"
        assert endpoint["authorization"]["type"] == "Bearer"  # /metrics needs a read token


def test_the_plain_scrape_config_finds_the_headless_service():
    config = load(K8S / "prometheus" / "scrape-config.yaml")[0]
    namespace = load(BASE / "kustomization.yaml")[0]["namespace"]
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "ablationd")
    sd = job["dns_sd_configs"][0]
    headless = one("Service", "ablationd-metrics")
    assert sd["names"] == [f"ablationd-metrics.{namespace}.svc.cluster.local"]
    assert sd["port"] == headless["spec"]["ports"][0]["port"]
    assert job["metrics_path"] == "/metrics"
    assert job["authorization"]["type"] == "Bearer"
    if shutil.which("promtool") is None:
        pytest.skip("promtool (package prometheus) is not installed: the config's syntax is unchecked")
    # promtool checks that the token file it names exists: beside a copy of the config.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(K8S / "prometheus" / "scrape-config.yaml", tmp)
        (pathlib.Path(tmp) / job["authorization"]["credentials_file"]).write_text("token\n")
        done = subprocess.run(["promtool", "check", "config", str(pathlib.Path(tmp) / "scrape-config.yaml")],
                              capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_clock_lock_overlay_adds_sys_admin_to_a_root_daemon_only():
    k = load(OVERLAY / "kustomization.yaml")[0]
    assert k["resources"] == ["../../base"]
    patches = {p["target"]["kind"]: p for p in k["patches"]}
    assert set(patches) == {"DaemonSet", "Namespace"}
    ds_ref = patches["DaemonSet"]
    patch = load(OVERLAY / ds_ref["path"])[0]
    ds = one("DaemonSet", ds_ref["target"]["name"])
    # A capability is effective only for root: the daemon runs as root, with SYS_ADMIN added.
    assert patch["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 0
    patched = {pc["name"]: pc for pc in patch["spec"]["template"]["spec"]["containers"]}
    for name, pc in patched.items():
        _, base_c = container(ds, name)  # StopIteration: a container the base lacks
        assert pc["securityContext"]["runAsNonRoot"] is False  # root: runAsUser 0 of the pod
    caps = patched["ablationd"]["securityContext"]["capabilities"]
    assert caps["add"] == ["SYS_ADMIN"]
    assert caps["drop"] == container(ds, "ablationd")[1]["securityContext"]["capabilities"]["drop"]
    # The reloader only signals the daemon: root as the daemon is (a signal needs the same
    # user), and no capability at all.
    assert "capabilities" not in patched["config-reloader"]["securityContext"]
    ns = load(OVERLAY / patches["Namespace"]["path"])[0]
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def kustomize(path):
    done = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(done.stdout)}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl here to run kustomize")
def test_kustomize_builds_the_base_and_the_overlays():
    base = kustomize(BASE)
    lock = kustomize(OVERLAY)
    claim = kustomize(CLAIM_OVERLAY)
    restricted = kustomize(K8S / "overlays" / "restricted")
    assert base.keys() == lock.keys() == restricted.keys()
    config = [n for (k, n) in base if k == "ConfigMap"]
    assert config == ["ablationd-config"], "a stable name: an edit reloads, never rolls"
    ds = base[("DaemonSet", "ablationd")]
    assert ds["metadata"]["namespace"] == "ablationd"
    assert {"configMap": {"name": config[0]}, "name": "config"} in ds["spec"]["template"]["spec"]["volumes"]
    for key, base_obj in base.items():
        if key not in (("DaemonSet", "ablationd"), ("Namespace", "ablationd")):
            assert lock[key] == base_obj, key
    _, c = container(lock[("DaemonSet", "ablationd")], "ablationd")
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
    # The claim overlay: the nightly reports on a claim; no claim for the DaemonSet, whose pods
    # would all share it (one claim, bound to one node): its database stays on each node.
    claims = [n for (k, n) in claim if k == "PersistentVolumeClaim"]
    assert claims == ["ablationd-reports"]
    assert claim[("DaemonSet", "ablationd")] == ds
    reports = {v["name"]: v for v in container(claim[("CronJob", "ablationd-nightly")])[0]["spec"]["volumes"]}
    assert reports["reports"] == {"name": "reports", "persistentVolumeClaim": {"claimName": "ablationd-reports"}}
    assert restricted_violations(container(claim[("CronJob", "ablationd-nightly")])[0]["spec"]) == []
    # The restricted overlay: enforced, the database on an emptyDir, nothing else changed.
    pod, _ = container(restricted[("DaemonSet", "ablationd")])
    assert restricted_violations(pod["spec"]) == []
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["db"] == {"name": "db", "emptyDir": {"sizeLimit": "20Gi"}}
    labels = restricted[("Namespace", "ablationd")]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    for key, base_obj in base.items():
        if key not in (("DaemonSet", "ablationd"), ("Namespace", "ablationd")):
            assert restricted[key] == base_obj, key


def test_the_image_holds_the_programs_the_manifests_run():
    containerfile = (K8S / "Containerfile").read_text()
    assert "COPY bundle/ /opt/ablationd/" in containerfile
    for kind in ("DaemonSet", "CronJob"):
        command = container(one(kind))[1]["command"][0]
        assert command.startswith("/opt/ablationd/bin/"), command


def test_the_image_brings_cuobjdump_and_says_how_to_get_ncu():
    """`sass` runs cuobjdump and `profile` runs ncu in the daemon's container, which a CUDA
    runtime image lacks: cuobjdump is installed from the CUDA repository of the base's version,
    Nsight Compute on request, and the documentation says which command needs which."""
    containerfile = (K8S / "Containerfile").read_text()
    assert re.search(r"^ARG WITH_CUOBJDUMP=1$", containerfile, re.M)
    assert re.search(r"^ARG WITH_NCU=0$", containerfile, re.M)
    assert 'tools="$tools cuda-cuobjdump-$cuda"' in containerfile
    assert 'tools="$tools cuda-nsight-compute-$cuda"' in containerfile
    assert "apt-get install -y --no-install-recommends jq python3 $tools" in containerfile
    # Where the daemon looks for them (server/core/inspect: /usr/local/cuda/bin, and
    # /opt/nvidia/nsight-compute/<version>/ncu), which is where these packages put them.
    inspect = (ROOT / "server" / "core" / "inspect")
    assert '"/usr/local/cuda/bin/" + s.name' in (inspect / "cuda_tool.cc").read_text()
    assert '.name = "cuobjdump"' in (inspect / "sass_inspect.cc").read_text()
    assert "/opt/nvidia/nsight-compute" in (inspect / "profiler.cc").read_text()
    readme = (K8S / "README.md").read_text()
    for words in ("`sass`", "`profile`", "cuobjdump", "ncu", "WITH_NCU=1",
                  "NVreg_RestrictProfilingToAdminUsers=0"):
        assert words in readme, f"deploy/k8s/README.md does not say {words}"


def exported_metrics():
    """The metric names the daemon registers (server/metrics/registry.cc), histograms' series too,
    and those the nightly job writes for node-exporter's textfile collector (deploy/nightly.sh)."""
    text = (ROOT / "server" / "metrics" / "registry.cc").read_text()
    names = set(re.findall(r'"(ablationd_[a-z_]+)"', text))
    names |= set(re.findall(r'(ablationd_[a-z_]+)\{', (ROOT / "deploy" / "nightly.sh").read_text()))
    for n in list(names):
        names |= {n + "_bucket", n + "_sum", n + "_count"}
    return names | {"up"}


def promql_metrics(expr):
    """The metric names an expression reads (identifiers followed by a selector or a range)."""
    return set(re.findall(r"\b([a-z_:][a-z0-9_:]*)\s*(?=\{|\[)", expr)) - {"by", "without"}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (package prometheus) is not installed")
def test_the_alert_rules_parse_and_fire_when_they_should():
    rule = load(K8S / "prometheus" / "prometheusrule.yaml")[0]
    assert rule["metadata"]["namespace"] == load(BASE / "kustomization.yaml")[0]["namespace"]
    for group in rule["spec"]["groups"]:
        for r in group["rules"]:
            assert promql_metrics(r["expr"]) <= exported_metrics(), r["alert"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
        shutil.copy(K8S / "prometheus" / "rules-test.yaml", tmp / "rules-test.yaml")
        checked = subprocess.run(["promtool", "check", "rules", str(tmp / "rules.yaml")],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        tested = subprocess.run(["promtool", "test", "rules", "rules-test.yaml"], cwd=tmp,
                                capture_output=True, text=True)
        assert tested.returncode == 0, tested.stdout + tested.stderr
        alerts = {r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]}
        tests = yaml.safe_load((tmp / "rules-test.yaml").read_text())["tests"]
        fired = {t["alertname"] for group in tests for t in group["alert_rule_test"] if t["exp_alerts"]}
        assert alerts == fired, "every alert is proved to fire"


def test_a_nightly_that_never_reported_alerts():
    """The verdict-age alert needs a verdict to age; absent() covers the nightly that never
    wrote one (the CronJob never ran, or died before its verdict every night)."""
    rule = load(K8S / "prometheus" / "prometheusrule.yaml")[0]
    rules = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}
    never = rules["AblationdNightlyNeverReported"]
    assert never["expr"].startswith("absent(ablationd_nightly_verdict_timestamp_seconds")
    assert never["for"] == "2d"
    tests = yaml.safe_load((K8S / "prometheus" / "rules-test.yaml").read_text())["tests"]
    # Proved both ways: firing where no verdict series exists at all, quiet where one does.
    cases = [(t["eval_time"], bool(t["exp_alerts"])) for group in tests
             for t in group["alert_rule_test"] if t["alertname"] == "AblationdNightlyNeverReported"]
    assert {firing for _, firing in cases} == {True, False}, cases


@pytest.mark.parametrize("name, least", [("ablationd-dashboard.json", 9), ("ablationd-fleet-dashboard.json", 4)])
def test_the_dashboard_reads_only_what_the_daemon_exports(name, least):
    """Prometheus panels only (the fleet dashboard's PostgreSQL panels run against a real server in
    tests/e2e/fleet_e2e_test.cc)."""
    import json
    dash = json.loads((K8S / "grafana" / name).read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"] if "expr" in t]
    assert len(exprs) >= least
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    for e in exprs:
        assert promql_metrics(e) <= exported_metrics(), e
    if shutil.which("promtool") is None:
        pytest.skip("promtool (package prometheus) is not installed: the queries' syntax is unchecked")
    # Each query as a recording rule, which promtool parses ($variables as the values they take).
    with tempfile.TemporaryDirectory() as tmp:
        rules = [{"record": f"ablationd:panel_{i}", "expr": e.replace("$instance", ".*").replace("$variant", ".*")}
                 for i, e in enumerate(exprs)]
        path = pathlib.Path(tmp) / "dashboard-rules.yaml"
        path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
        checked = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
