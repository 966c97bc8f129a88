"""deploy/k8s checked offline: documents parse and have their required fields; names, labels
and ports agree across the DaemonSet, Services, CronJob and ServiceMonitor and with the daemon's
own flags; the pods meet Pod Security "restricted" (the clock-lock overlay aside); the daemon
starts with exactly the DaemonSet's arguments and the ConfigMap's configuration (TLS and tokens
as the Secrets give them) and answers a client over TLS with a token; the nightly job reaches
every daemon; the clock-lock overlay grants SYS_ADMIN to a root daemon and nothing else, the
volume-claim overlay puts the database on a claim. No cluster is needed: kubeconform and kubeval
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
    # The database (and its WAL and clock journal beside it) on the pod's volume.
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    db_dir = os.path.dirname(args["--db"])
    assert db_dir in mounts, f"--db {args['--db']}: {db_dir} is not mounted"
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts[db_dir])
    assert "emptyDir" in volume or "persistentVolumeClaim" in volume
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


def test_the_base_meets_pod_security_restricted_and_its_namespace_enforces_it():
    for kind in ("DaemonSet", "CronJob"):
        pod, _ = container(one(kind))
        assert restricted_violations(pod["spec"]) == [], kind
    labels = one("Namespace")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


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


def test_the_daemon_starts_with_exactly_the_manifests_arguments_and_configuration():
    """The DaemonSet's args and the ConfigMap's ablationd.toml as they are; only the mount paths
    are this machine's folders (made as the volumes would be: the Secrets' files, the ConfigMap's
    file) and the ports free ones (ctest runs tests side by side)."""
    pod, c = container(one("DaemonSet", "ablationd"), "ablationd")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        # Every mount to a folder of its own, longest path first so nested ones map right.
        mounts = sorted(((m["mountPath"], tmp / m["name"]) for m in c["volumeMounts"]),
                        key=lambda m: -len(m[0]))
        for _, folder in mounts:
            folder.mkdir()

        # One pass, longest mount first: a folder made under /tmp must not be mapped again.
        pattern = re.compile("|".join(re.escape(path) for path, _ in mounts) + r"(?=/|\b|$)")
        folders = dict(mounts)

        def local(text):
            return pattern.sub(lambda m: str(folders[m.group(0)]), text)

        # The TLS Secret: a self-signed certificate for the Service's name.
        tls = dict(mounts)["/etc/ablationd/tls"]
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        str(tls / "tls.key"), "-out", str(tls / "tls.crt"), "-days", "1",
                        "-subj", "/CN=ablationd", "-addext",
                        "subjectAltName=DNS:ablationd,DNS:ablationd.ablationd.svc"],
                       check=True, capture_output=True)
        # The tokens Secret: the hash of the nightly job's token, as --hash-token writes it.
        token = "k8s-test-token-0123456789abcdef"
        line = subprocess.run([os.environ["ABLATIOND"], "--hash-token", "nightly:run"],
                              input=token, capture_output=True, text=True, check=True).stdout
        (dict(mounts)["/etc/ablationd/tokens"] / "tokens").write_text(line)
        # The ConfigMap's file.
        config_dir = dict(mounts)["/etc/ablationd/config"]
        (config_dir / "ablationd.toml").write_text(local((BASE / "ablationd.toml").read_text()))
        grpc_port, metrics_port = free_port(), free_port()
        args = [local(a) for a in c["args"]]
        args[args.index("0.0.0.0:50051")] = f"0.0.0.0:{grpc_port}"
        args[args.index("0.0.0.0:9464")] = f"0.0.0.0:{metrics_port}"
        log = open(tmp / "ablationd.log", "w")
        daemon = subprocess.Popen([os.environ["ABLATIOND"], *args], stdout=log,
                                  stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(dict(mounts)["/tmp"])})
        try:
            # The probes' answer: the metrics endpoint serves.
            def metrics_answer():
                assert daemon.poll() is None, "ablationd exited: " + (tmp / "ablationd.log").read_text()
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/healthz", timeout=2) as r:
                    return r.status == 200

            wait_for(metrics_answer, 60, "the metrics endpoint (the probes) answers")
            # /metrics itself needs a token of this daemon (it has tokens).
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2)
            assert refused.value.code == 401
            request = urllib.request.Request(f"http://127.0.0.1:{metrics_port}/metrics",
                                             headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=2) as r:
                assert r.status == 200
            assert daemon.poll() is None, (tmp / "ablationd.log").read_text()
            # TLS on the gRPC listener, with the certificate the Service's name verifies.
            context = ssl.create_default_context(cafile=str(tls / "tls.crt"))
            context.set_alpn_protocols(["h2"])
            with socket.create_connection(("127.0.0.1", grpc_port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="ablationd") as conn:
                    assert conn.selected_alpn_protocol() == "h2"
            client = os.environ.get("ABLATION_CLIENT")
            if client:
                # As the nightly job calls it: by IP, TLS checked against the Service's name.
                token_file = tmp / "nightly.token"
                token_file.write_text(token + "\n")
                env = {**os.environ, "ABLATION_TLS": "1", "ABLATION_CA": str(tls / "tls.crt"),
                       "ABLATION_TLS_SERVER_NAME": "ablationd",
                       "ABLATION_TOKEN_FILE": str(token_file)}
                done = subprocess.run([client, "--server", f"127.0.0.1:{grpc_port}", "runs"],
                                      env=env, capture_output=True, text=True)
                assert done.returncode == 0, done.stderr
                env.pop("ABLATION_TOKEN_FILE")
                refused = subprocess.run([client, "--server", f"127.0.0.1:{grpc_port}", "runs"],
                                         env=env, capture_output=True, text=True)
                # Without a token: refused (anonymous callers may do nothing).
                assert refused.returncode != 0, refused.stdout
                assert re.search(r"UNAUTHENTICATED|PERMISSION_DENIED", refused.stderr), refused.stderr
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                status = daemon.wait(timeout=pod["spec"]["terminationGracePeriodSeconds"])
            except subprocess.TimeoutExpired:
                daemon.kill()
                raise
            log.close()
        assert status == 0, (tmp / "ablationd.log").read_text()


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
    for pc in patch["spec"]["template"]["spec"]["containers"]:
        _, base_c = container(ds, pc["name"])  # StopIteration: a container the base lacks
        caps = pc["securityContext"]["capabilities"]
        assert caps["add"] == ["SYS_ADMIN"]
        assert caps["drop"] == base_c["securityContext"]["capabilities"]["drop"]
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
    assert base.keys() == lock.keys()
    config = [n for (k, n) in base if k == "ConfigMap"]
    assert len(config) == 1 and config[0].startswith("ablationd-config-"), "named by its content"
    ds = base[("DaemonSet", "ablationd")]
    assert ds["metadata"]["namespace"] == "ablationd"
    assert {"configMap": {"name": config[0]}, "name": "config"} in ds["spec"]["template"]["spec"]["volumes"]
    for key, base_obj in base.items():
        if key not in (("DaemonSet", "ablationd"), ("Namespace", "ablationd")):
            assert lock[key] == base_obj, key
    _, c = container(lock[("DaemonSet", "ablationd")], "ablationd")
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
    # The claim overlay: the database and the reports on claims, still restricted.
    assert ("PersistentVolumeClaim", "ablationd-db") in claim
    volumes = {v["name"]: v for v in claim[("DaemonSet", "ablationd")]["spec"]["template"]["spec"]["volumes"]}
    assert volumes["db"] == {"name": "db", "persistentVolumeClaim": {"claimName": "ablationd-db"}}
    for kind, name in (("DaemonSet", "ablationd"), ("CronJob", "ablationd-nightly")):
        pod, _ = container(claim[(kind, name)])
        assert restricted_violations(pod["spec"]) == [], kind


def test_the_image_holds_the_programs_the_manifests_run():
    containerfile = (K8S / "Containerfile").read_text()
    assert "COPY bundle/ /opt/ablationd/" in containerfile
    for kind in ("DaemonSet", "CronJob"):
        command = container(one(kind))[1]["command"][0]
        assert command.startswith("/opt/ablationd/bin/"), command


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
        tested_alerts = {t["alertname"] for t in
                         yaml.safe_load((tmp / "rules-test.yaml").read_text())["tests"][0]["alert_rule_test"]}
        assert alerts == tested_alerts, "every alert has a test"


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
