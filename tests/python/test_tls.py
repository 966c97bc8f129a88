"""connect() with the CLI's TLS options against a real daemon whose certificate is for the
Kubernetes Service's name, not for the address the notebook reaches (a port-forward to
127.0.0.1, as deploy/k8s/README.md shows it), and which asks for client certificates: the
override and a client certificate get through, for queries, runs and the CLI's report alike;
without them the ConnectionError says which is missing rather than "is it running?"."""

import asyncio
import pathlib

import pytest

import ablationd
import ablationd.aio
from ablation_testing import Daemon, make_certificates


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_daemon(pki):
    """TLS with a certificate for "ablationd" (no IP in it) and client certificates of the CA
    required; a caller with one may run."""
    config = pki / "ablationd.toml"
    config.write_text(f'[auth]\nclient_cert_role = "run"\n'
                      f'[tls]\ncert = "{pki / "server.pem"}"\nkey = "{pki / "server.key"}"\n'
                      f'client_ca = "{pki / "ca.pem"}"\nrequire_client_cert = true\n')
    d = Daemon(extra_args=("--config", str(config)))
    yield d
    d.stop()


def options(pki, **kw):
    base = dict(ca=str(pki / "ca.pem"), cert=str(pki / "client.pem"), key=str(pki / "client.key"),
                tls_server_name="ablationd")
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


def test_the_server_name_override_and_a_client_certificate_get_through(tls_daemon, pki):
    with ablationd.connect(tls_daemon.address, **options(pki)) as d:
        assert d.settings.tls and d.settings.server_name == "ablationd"
        summary = d.run(variants=["cublas_bf16"], shapes=["128"], tags=["tls"])
        assert summary.state == "succeeded"
        assert d.runs(tag="tls")["run_id"].tolist() == [summary.run_id]
        # The report is the CLI's: it must reach the daemon with the same name and certificate.
        assert d.report_text(summary.run_id).startswith(f"# Ablation report: run {summary.run_id}")


def test_pem_bytes_and_an_https_address_do_as_paths_and_tls_do(tls_daemon, pki):
    pem = {name: (pki / f"{name}.pem").read_bytes() for name in ("ca", "client")}
    with ablationd.connect(f"https://{tls_daemon.address}", root_certificates=pem["ca"],
                           cert=pem["client"], key=(pki / "client.key").read_bytes(),
                           tls_server_name="ablationd") as d:
        assert d.address == tls_daemon.address
        assert d.device().available


def test_the_clis_environment_variables_are_read_as_the_cli_reads_them(tls_daemon, pki,
                                                                        monkeypatch):
    monkeypatch.setenv("ABLATION_SERVER", tls_daemon.address)
    monkeypatch.setenv("ABLATION_TLS", "1")
    monkeypatch.setenv("ABLATION_CA", str(pki / "ca.pem"))
    monkeypatch.setenv("ABLATION_TLS_SERVER_NAME", "ablationd")
    with ablationd.connect(cert=pki / "client.pem", key=pki / "client.key") as d:
        assert d.device().available


def test_a_certificate_for_another_name_is_named_not_a_daemon_that_is_down(tls_daemon, pki):
    with pytest.raises(ConnectionError) as error:
        ablationd.connect(tls_daemon.address, wait=2, **options(pki, tls_server_name=None))
    message = str(error.value)
    assert "is it running" not in message
    assert "not for the name '127.0.0.1'" in message
    assert "ablationd" in message.split("not for the name")[1]  # what the certificate names
    assert "tls_server_name='ablationd'" in message
    # The asyncio client says the same.
    with pytest.raises(ConnectionError, match="not for the name '127.0.0.1'"):
        asyncio.run(ablationd.aio.connect(tls_daemon.address, wait=2,
                                          **options(pki, tls_server_name=None)))


def test_a_missing_client_certificate_and_an_unknown_ca_are_named(tls_daemon, pki, tmp_path):
    with pytest.raises(ConnectionError, match="asks for a client certificate does: pass cert=PATH"):
        ablationd.connect(tls_daemon.address, wait=2, **options(pki, cert=None, key=None))
    other = make_certificates(tmp_path)  # another CA altogether
    with pytest.raises(ConnectionError, match="not signed by a CA this client trusts"):
        ablationd.connect(tls_daemon.address, wait=2, **options(pki, ca=str(other / "ca.pem")))


def test_plaintext_to_a_tls_daemon_says_it_speaks_tls(tls_daemon):
    with pytest.raises(ConnectionError, match="it speaks TLS: pass tls=True"):
        ablationd.connect(tls_daemon.address, tls=False, wait=2)


def test_the_async_client_takes_the_same_options(tls_daemon, pki):
    async def main():
        async with await ablationd.aio.connect(tls_daemon.address, **options(pki)) as a:
            return (await a.device()).available, await a.runs(limit=1)

    available, runs = asyncio.run(main())
    assert available and list(runs.columns) == ablationd.frames.RUN_COLUMNS


def test_options_that_contradict_each_other_are_refused(pki):
    with pytest.raises(ValueError, match="cert and key go together"):
        ablationd.Client("127.0.0.1:1", cert=str(pki / "client.pem"))
    with pytest.raises(ValueError, match="need TLS"):
        ablationd.Client("127.0.0.1:1", tls=False, tls_server_name="ablationd")
    with pytest.raises(ValueError, match="ca: cannot read"):
        ablationd.Client("127.0.0.1:1", ca=str(pathlib.Path(pki, "no-such.pem")))
