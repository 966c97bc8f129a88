"""check_layers.py: the tree as it is passes, and each rule catches what it is for."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_layers  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_the_tree_keeps_its_walls():
    assert check_layers.check(ROOT) == []


def test_an_include_that_runs_back_up_is_named(tmp_path):
    write(tmp_path, "server/core/plan/run_plan.h", '#include "server/core/gpu/regime.h"\n')
    write(tmp_path, "server/core/gpu/regime.h",
          '#pragma once\n#include "server/core/runs/run_job.h"\n')
    write(tmp_path, "server/core/runs/run_job.h", '#include "server/core/plan/run_plan.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == ["server/core/gpu/regime.h:2: includes server/core/runs/run_job.h: "
                        "gpu/ is below runs/ and may not include it"]


def test_grpc_in_the_core_and_the_core_in_the_worker_are_refused(tmp_path):
    write(tmp_path, "server/core/queries/q.cc", '#include <grpcpp/grpcpp.h>\n')
    write(tmp_path, "server/worker/measure.cc", '#include "server/core/gpu/regime.h"\n')
    write(tmp_path, "kernels/x.cu", '#include "server/core/plan/run_plan.h"\n')
    problems = check_layers.check(tmp_path)
    assert len(problems) == 3, problems
    text = "\n".join(problems)
    assert "q.cc:1: includes grpcpp/grpcpp.h: the core knows nothing of gRPC" in text
    assert "x.cu:1: includes server/core/plan/run_plan.h: the kernels' code never" in text
    assert "measure.cc:1: includes server/core/gpu/regime.h: the worker process never" in text


def test_the_shared_protocol_includes_neither_process(tmp_path):
    write(tmp_path, "server/protocol/window_stats.cc",
          '#include "server/protocol/window_stats.h"\n#include "common/stats.h"\n'
          '#include "ablation/v1/worker.pb.h"\n#include <vector>\n')
    write(tmp_path, "server/protocol/framing.cc", '#include "server/worker/device.h"\n')
    write(tmp_path, "server/protocol/clocks.cc", '#include "server/core/base/status.h"\n')
    problems = check_layers.check(tmp_path)
    assert len(problems) == 2, problems
    text = "\n".join(problems)
    assert ("framing.cc:1: includes server/worker/device.h: server/protocol/ (what the daemon and "
            "the worker share) includes only itself, common/ and the API") in text
    assert "clocks.cc:1: includes server/core/base/status.h: server/protocol/" in text


def test_nvrtc_lives_in_the_compiler_process_alone(tmp_path):
    write(tmp_path, "server/compile/nvrtc.cc",
          '#include "server/compile/nvrtc.h"\n#include "kernels/user/build.h"\n#include <nvrtc.h>\n')
    write(tmp_path, "server/compile/main.cc", '#include "server/core/base/status.h"\n')
    write(tmp_path, "server/compile/sandbox.cc", '#include "kernels/user/manifest.h"\n')
    write(tmp_path, "server/core/userkernels/compiler.cc",
          '#include "kernels/user/build.h"\n#include "server/compile/nvrtc.h"\n')
    write(tmp_path, "server/worker/user_kernels.cc", '#include <nvrtc.h>\n')
    write(tmp_path, "tests/compile/nvrtc_test.cc", '#include "server/compile/nvrtc.h"\n')
    problems = check_layers.check(tmp_path)
    text = "\n".join(problems)
    assert len(problems) == 4, problems
    assert ("main.cc:1: includes server/core/base/status.h: the compiler process "
            "(server/compile/) includes only itself, kernels/user/build.h and common/") in text
    assert "sandbox.cc:1: includes kernels/user/manifest.h: the compiler process" in text
    assert ("userkernels/compiler.cc:2: includes server/compile/nvrtc.h: NVRTC lives in the "
            "compiler process alone") in text
    assert "user_kernels.cc:1: includes nvrtc.h: NVRTC lives in the compiler process alone" in text


def test_the_core_and_the_worker_never_include_each_other(tmp_path):
    write(tmp_path, "server/core/runs/measurement_step.cc",
          '#include "server/protocol/window_stats.h"\n#include "server/worker/timing_stats.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == ["server/core/runs/measurement_step.cc:2: includes "
                        "server/worker/timing_stats.h: the core never includes the worker process "
                        "(what they share is in server/protocol/)"]


def test_the_metrics_stand_above_the_core(tmp_path):
    write(tmp_path, "server/core/runs/run_recorder.cc", '#include "server/metrics/registry.h"\n')
    write(tmp_path, "server/core/base/events.h", '#pragma once\n')
    write(tmp_path, "server/metrics/registry.h", '#include "server/core/base/events.h"\n')
    write(tmp_path, "server/worker/worker.cc", '#include "server/metrics/registry.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == [
        "server/core/runs/run_recorder.cc:1: includes server/metrics/registry.h: the metrics "
        "stand above the core, which never includes them (it reports to DaemonEvents)",
        "server/worker/worker.cc:1: includes server/metrics/registry.h: the worker process "
        "includes nothing of the daemon"]


def test_files_outside_the_folders_and_unknown_folders_are_refused(tmp_path):
    write(tmp_path, "server/core/loose.h", "#pragma once\n")
    write(tmp_path, "server/core/runs/a.cc", '#include "server/core/misc/b.h"\n')
    problems = check_layers.check(tmp_path)
    assert any("server/core/loose.h: server/core/ files live in one of" in p for p in problems)
    assert any("includes server/core/misc/b.h: no such core folder" in p for p in problems)


def test_the_common_library_stands_on_nothing_but_the_api(tmp_path):
    write(tmp_path, "common/stats.cc", '#include "common/stats.h"\n#include <vector>\n'
                                       '#include "ablation/v1/ablation.pb.h"\n')
    write(tmp_path, "common/enum_words.cc", '#include "client/output/format.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == ["common/enum_words.cc:1: includes client/output/format.h: the common library "
                        "includes only common/ and the API"]


def test_the_fleet_code_and_the_client_stay_off_the_sqlite_store(tmp_path):
    write(tmp_path, "db/fleet/fleet_reader.cc", '#include "db/fleet/pg.h"\n#include "db/store.h"\n')
    write(tmp_path, "db/fleet/pg.cc", '#include <sqlite3.h>\n')
    write(tmp_path, "client/fleet.cc", '#include "db/fleet/fleet_reader.h"\n#include "db/records.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == [
        "client/fleet.cc:2: includes db/records.h: the client reads storage only through db/fleet/",
        "db/fleet/fleet_reader.cc:2: includes db/store.h: db/fleet/ knows nothing of the SQLite store",
        "db/fleet/pg.cc:1: includes sqlite3.h: db/fleet/ knows nothing of the SQLite store"]


def test_the_folder_graph_counts_includes_and_marks_one_that_runs_back_up(tmp_path):
    write(tmp_path, "server/core/runs/run_job.cc", '#include "server/core/plan/run_plan.h"\n'
                                                   '#include "server/core/plan/limits.h"\n')
    write(tmp_path, "server/core/gpu/regime.cc", '#include "server/core/runs/run_job.h"\n')
    assert check_layers.folder_graph(tmp_path) == {("runs", "plan"): 2, ("gpu", "runs"): 1}
    graph = check_layers.dot(tmp_path)
    assert '"runs" -> "plan" [label=2];' in graph
    assert '"gpu" -> "runs" [label=1 color=red penwidth=2];' in graph


def test_the_clients_folders_keep_their_order(tmp_path):
    write(tmp_path, "client/output/table.cc", '#include "client/cli/options.h"\n')
    write(tmp_path, "client/cli/dtype.cc", '#include "client/sources/channel.h"\n')
    write(tmp_path, "client/report/report.cc", '#include "client/output/format.h"\n'
                                               '#include "client/runs/follow.h"\n')
    write(tmp_path, "client/sources/source.cc", '#include "client/cli/calls.h"\n'
                                                '#include "client/app.h"\n')
    write(tmp_path, "client/app.cc", '#include "client/commands/cmd_run.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == [
        "client/cli/dtype.cc:1: includes client/sources/channel.h: client/cli/ is below "
        "client/sources/ and may not include it",
        "client/output/table.cc:1: includes client/cli/options.h: client/output/ is below "
        "client/cli/ and may not include it",
        "client/report/report.cc:2: includes client/runs/follow.h: client/report/ is below "
        "client/runs/ and may not include it",
        "client/sources/source.cc:2: includes client/app.h: sources/ may not include client/'s "
        "root (app, main)"]


def test_a_command_includes_no_other_command_and_folders_are_known(tmp_path):
    write(tmp_path, "client/commands/cmd_run.cc", '#include "client/commands/cmd_run.h"\n'
                                                  '#include "client/commands/cmd_sweep.h"\n')
    write(tmp_path, "client/misc/helper.cc", '#include "client/output/format.h"\n')
    problems = check_layers.check(tmp_path)
    assert problems == [
        "client/commands/cmd_run.cc:2: includes client/commands/cmd_sweep.h: a command includes "
        "no other command (what they share lives below client/commands/)",
        "client/misc/helper.cc: client/ files live at its root or in one of the folders "
        "['output', 'report', 'cli', 'sources', 'runs', 'commands']"]
