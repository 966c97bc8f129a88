"""deploy/k8s checked offline: documents parse and have their required fields; names, labels
and ports agree across the DaemonSet, Services, CronJob and ServiceMonitor and with the daemon's
own flags; the nightly job's settings are the ones deploy/nightly.sh reads; the clock-lock
overlay grants SYS_ADMIN and nothing else. No cluster is needed: kubeconform and kubeval are not
packaged in Debian, so API schemas are not checked (deploy/k8s/README.md)."""

import os
import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest
import yaml

ROOT = pathlib.Path(os.environ.get("ABLATION_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
K8S = ROOT / "deploy" / "k8s"
BASE = K8S / "base"
OVERLAY = K8S / "overlays" / "clock-lock"

API_VERSIONS = {
    "Namespace": "v1",
    "Service": "v1",
    "DaemonSet": "apps/v1",
    "CronJob": "batch/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "Kustomization": "kustomize.config.k8s.io/v1beta1",
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


def flags(args):
    """{--flag: value} of an argument list of --flag value pairs."""
    assert len(args) % 2 == 0 and all(a.startswith("--") for a in args[::2]), args
    return dict(zip(args[::2], args[1::2]))


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
    paths = sorted(p for p in K8S.rglob("*.yaml") if p.name != "scrape-config.yaml")
    assert len(paths) >= 8
    for path in paths:
        for d in load(path):
            where = f"{path.relative_to(ROOT)}"
            assert d.get("kind") in API_VERSIONS, f"{where}: unknown kind {d.get('kind')}"
            assert d.get("apiVersion") == API_VERSIONS[d["kind"]], f"{where}: apiVersion of {d['kind']}"
            if d["kind"] != "Kustomization":
                assert d.get("metadata", {}).get("name"), f"{where}: metadata.name"
                assert d.get("spec") or d["kind"] == "Namespace", f"{where}: spec"


def test_the_base_kustomization_lists_every_file_and_the_namespace():
    k = load(BASE / "kustomization.yaml")[0]
    listed = set(k["resources"])
    assert listed == {p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml"}
    assert one("Namespace")["metadata"]["name"] == k["namespace"]
    images = {i["name"] for i in k["images"]}
    for kind in ("DaemonSet", "CronJob"):
        assert container(one(kind))[1]["image"].split(":")[0] in images


def test_the_daemonset_runs_on_gpu_nodes_with_a_gpu():
    ds = one("DaemonSet", "ablationd")
    pod, c = container(ds, "ablationd")
    assert subset(ds["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
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
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == ports["grpc"], probe
    # The database (and its WAL and clock journal beside it) on the node's volume.
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    db_dir = os.path.dirname(args["--db"])
    assert db_dir in mounts, f"--db {args['--db']}: {db_dir} is not mounted"
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts[db_dir])
    assert "hostPath" in volume or "persistentVolumeClaim" in volume
    # Observe-only by default; the root filesystem is read-only, /tmp is not.
    sc = c["securityContext"]
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True and "/tmp" in mounts
    assert not list(added_capabilities(objects())), "the base adds a capability"


def test_the_services_select_the_daemon_and_name_its_ports():
    ds = one("DaemonSet", "ablationd")
    pod, c = container(ds, "ablationd")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    services = {n: o for (k, n), o in objects().items() if k == "Service"}
    assert set(services) == {"ablationd", "ablationd-local", "ablationd-metrics"}
    for name, svc in services.items():
        assert subset(svc["spec"]["selector"], pod["metadata"]["labels"]), name
        for p in svc["spec"]["ports"]:
            assert p["targetPort"] in ports, f"{name}: targetPort {p['targetPort']}"
            assert p["port"] == ports[p["targetPort"]], f"{name}: port {p['name']}"
    assert services["ablationd-local"]["spec"]["internalTrafficPolicy"] == "Local"
    assert services["ablationd-metrics"]["spec"]["clusterIP"] == "None"


def test_the_cronjob_is_the_nightly_job_against_its_nodes_daemon():
    cj = one("CronJob", "ablationd-nightly")
    pod, c = container(cj)
    ds_pod, ds_c = container(one("DaemonSet", "ablationd"), "ablationd")
    assert len(cj["spec"]["schedule"].split()) == 5
    assert cj["spec"]["concurrencyPolicy"] == "Forbid"
    assert cj["spec"]["jobTemplate"]["spec"]["backoffLimit"] == 0
    assert pod["spec"]["restartPolicy"] == "Never"
    assert c["image"] == ds_c["image"]
    assert pod["spec"]["nodeSelector"] == ds_pod["spec"]["nodeSelector"]
    assert pod["spec"]["tolerations"] == ds_pod["spec"]["tolerations"]
    # The bundle installs deploy/nightly.sh as bin/ablationd-nightly, beside the client it finds.
    assert c["command"] == ["/opt/ablationd/bin/ablationd-nightly"]
    assert 'install -m 0755 "$here/nightly.sh" "$out/bin/ablationd-nightly"' in (
        ROOT / "deploy" / "make-bundle.sh").read_text()
    env = {e["name"]: e["value"] for e in c["env"]}
    nightly = (ROOT / "deploy" / "nightly.sh").read_text()
    read = set(re.findall(r"\$\{?([A-Z_]+)", nightly))
    assert set(env) <= read, f"settings nightly.sh does not read: {set(env) - read}"
    local = one("Service", "ablationd-local")
    grpc_port = next(p["port"] for p in local["spec"]["ports"] if p["name"] == "grpc")
    assert env["ABLATION_SERVER"] == f"ablationd-local:{grpc_port}"
    assert env["REPORT_DIR"] in {m["mountPath"] for m in c["volumeMounts"]}
    assert re.fullmatch(r"[0-9]*\.?[0-9]+%?", env["THRESHOLD"])  # what nightly.sh accepts
    with open(ROOT / "deploy" / "presets.toml", "rb") as f:
        assert env["PRESET"] in tomllib.load(f), f"preset {env['PRESET']} is not in deploy/presets.toml"


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


def test_the_plain_scrape_config_finds_the_headless_service():
    config = load(K8S / "prometheus" / "scrape-config.yaml")[0]
    namespace = load(BASE / "kustomization.yaml")[0]["namespace"]
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "ablationd")
    sd = job["dns_sd_configs"][0]
    headless = one("Service", "ablationd-metrics")
    assert sd["names"] == [f"ablationd-metrics.{namespace}.svc.cluster.local"]
    assert sd["port"] == headless["spec"]["ports"][0]["port"]
    assert job["metrics_path"] == "/metrics"
    if shutil.which("promtool") is None:
        pytest.skip("promtool (package prometheus) is not installed: the config's syntax is unchecked")
    done = subprocess.run(["promtool", "check", "config", str(K8S / "prometheus" / "scrape-config.yaml")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_clock_lock_overlay_adds_sys_admin_to_the_daemon_only():
    k = load(OVERLAY / "kustomization.yaml")[0]
    assert k["resources"] == ["../../base"]
    (patch_ref,) = k["patches"]
    target = patch_ref["target"]
    assert objects().get((target["kind"], target["name"])), f"no {target} in the base"
    patch = load(OVERLAY / patch_ref["path"])[0]
    assert (patch["kind"], patch["metadata"]["name"]) == (target["kind"], target["name"])
    ds = one(target["kind"], target["name"])
    for pc in patch["spec"]["template"]["spec"]["containers"]:
        _, base_c = container(ds, pc["name"])  # StopIteration: a container the base lacks
        caps = pc["securityContext"]["capabilities"]
        assert caps["add"] == ["SYS_ADMIN"]
        assert caps["drop"] == base_c["securityContext"]["capabilities"]["drop"]
        assert set(pc) == {"name", "securityContext"} and set(pc["securityContext"]) == {"capabilities"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl here to run kustomize")
def test_kustomize_builds_the_base_and_the_overlay():
    built = {}
    for name, path in (("base", BASE), ("clock-lock", OVERLAY)):
        done = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr
        built[name] = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(done.stdout)}
    assert built["base"].keys() == built["clock-lock"].keys()
    for key, base_obj in built["base"].items():
        overlay_obj = built["clock-lock"][key]
        if key != ("DaemonSet", "ablationd"):
            assert overlay_obj == base_obj, key
            continue
        assert base_obj["metadata"]["namespace"] == "ablationd"
        _, c = container(overlay_obj, "ablationd")
        assert c["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
        c["securityContext"]["capabilities"].pop("add")
        assert overlay_obj == base_obj


def test_the_image_holds_the_programs_the_manifests_run():
    containerfile = (K8S / "Containerfile").read_text()
    assert "COPY bundle/ /opt/ablationd/" in containerfile
    for kind in ("DaemonSet", "CronJob"):
        command = container(one(kind))[1]["command"][0]
        assert command.startswith("/opt/ablationd/bin/"), command
