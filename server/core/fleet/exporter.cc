#include "server/core/fleet/exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "db/fleet/conninfo.h"
#include "db/fleet/fleet_change_points.h"
#include "db/fleet/fleet_schema.h"

namespace ablation::core {

FleetExporter::FleetExporter(FleetExportOptions options, db::Store* store, DaemonEvents* events)
    : options_(std::move(options)),
      store_(store),
      events_(events ? *events : NoEvents()),
      reader_(db::Store::OpenReadOnly(store->path())) {
  identity_.daemon_id = reader_->DaemonId();
  identity_.host_name = options_.host_name;
  identity_.node_labels = options_.node_labels;
  spdlog::info("fleet export to {} as daemon {} ({})", fleet::RedactConnInfo(options_.conninfo),
               identity_.daemon_id, identity_.host_name);
  thread_ = std::thread([this] { Loop(); });
}

FleetExporter::~FleetExporter() { Stop(); }

void FleetExporter::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FleetExporter::Wait(std::chrono::milliseconds how_long) {
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, how_long, [this] { return stop_; });
}

void FleetExporter::NoteFailure(const std::string& error) {
  events_.FleetDatabaseUp(false);
  if (!down_) {
    const db::OutboxBacklog backlog = reader_->ExportBacklog();
    spdlog::warn(
        "fleet export: {}; {} finished run(s) wait in the outbox and are kept until it "
        "answers (retrying up to every {} s)",
        error, backlog.runs, options_.max_backoff.count() / 1000);
    down_ = true;
    exported_since_down_ = 0;
  } else {
    spdlog::debug("fleet export: still failing: {}", error);
  }
}

bool FleetExporter::Connect() {
  if (connection_ && connection_->ok()) return true;
  connection_.reset();
  try {
    auto c = std::make_unique<fleet::PgConnection>(options_.conninfo);
    fleet::MigrateFleet(*c);
    connection_ = std::move(c);
    stale_ = true;  // a new connection: series another attempt left behind are looked for
    return true;
  } catch (const fleet::FleetError& e) {
    NoteFailure(e.what());
    return false;
  }
}

int FleetExporter::ExportBatch() {
  const std::vector<db::OutboxEntry> entries = reader_->PendingExports(options_.batch);
  int exported = 0;
  for (const db::OutboxEntry& entry : entries) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return exported;
    }
    if (!Connect()) return -1;
    fleet::RunExport run;
    try {
      std::optional<v1::Run> stored = reader_->GetRun(entry.run_id);
      if (!stored) {  // cannot happen: the outbox's key references runs
        store_->MarkExported(entry.run_id);
        continue;
      }
      run.run = std::move(*stored);
      run.measurements = reader_->MeasurementsOfRun(entry.run_id, /*include_samples=*/true);
      reader_->FillCounters(run.measurements);
      run.verifications = reader_->VerificationsOfRun(entry.run_id);
    } catch (const db::Error& e) {
      spdlog::error("fleet export: cannot read run {} from the store: {}", entry.run_id, e.what());
      return -1;
    }
    try {
      const fleet::ExportOutcome outcome = fleet::ExportRun(*connection_, identity_, run);
      store_->MarkExported(entry.run_id);  // after PostgreSQL's commit: at least once
      events_.FleetExported(outcome == fleet::ExportOutcome::kAlreadyThere);
      events_.FleetDatabaseUp(true);
      ++exported_since_down_;
      ++exported;
    } catch (const fleet::FleetError& e) {
      events_.FleetExportFailed();
      store_->RecordExportFailure(entry.run_id, e.what());
      if (connection_ && connection_->Ping()) {
        // PostgreSQL answered and refused this run: log it and go on with the others, so that
        // one bad row does not hold the fleet's view back; it is retried on the next pass.
        spdlog::error("fleet export: run {} refused (attempt {}): {}", entry.run_id,
                      entry.attempts + 1, e.what());
        continue;
      }
      connection_.reset();
      NoteFailure(e.what());
      return -1;
    }
    UpdateChangePoints(entry.run_id);
  }
  return exported;
}

void FleetExporter::UpdateChangePoints(int64_t run_id) {
  std::vector<fleet::FleetSeriesKey> series;
  try {
    series = fleet::SeriesOfRun(*connection_, identity_.daemon_id, run_id);
  } catch (const std::exception& e) {
    spdlog::warn("fleet change points: cannot find the series of run {}: {}; computed later",
                 run_id, e.what());
    stale_ = true;
    return;
  }
  for (const fleet::FleetSeriesKey& key : series) {
    try {
      fleet::RecomputeChangePoints(*connection_, key);
    } catch (const std::exception& e) {
      // The run is in PostgreSQL and out of the outbox: only its series' change points wait.
      spdlog::warn("fleet change points of {} (run {}) not computed: {}; computed later",
                   key.Name(), run_id, e.what());
      stale_ = true;
      if (!connection_->ok()) return;
    }
  }
}

bool FleetExporter::UpdateStaleChangePoints() {
  try {
    const std::vector<fleet::FleetSeriesKey> series = fleet::StaleSeries(*connection_);
    for (const fleet::FleetSeriesKey& key : series) {
      {
        std::lock_guard lock(mu_);
        if (stop_) return false;
      }
      fleet::RecomputeChangePoints(*connection_, key);
    }
    if (!series.empty()) {
      spdlog::info("fleet change points: computed {} series left behind", series.size());
    }
    stale_ = series.size() == 1000;  // StaleSeries' limit: more may wait
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("fleet change points: the series left behind not computed: {}; retrying",
                 e.what());
    return false;
  }
}

void FleetExporter::Loop() {
  std::chrono::milliseconds backoff = options_.min_backoff;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
    }
    db::OutboxBacklog backlog;
    try {
      backlog = reader_->ExportBacklog();
    } catch (const db::Error& e) {
      spdlog::error("fleet export: cannot read the outbox: {}", e.what());
      Wait(options_.max_backoff);
      continue;
    }
    events_.FleetBacklog(backlog.runs, backlog.oldest_enqueued_at_ms);
    if (backlog.runs == 0 && stale_) {
      // Nothing to export: the series whose change points a failure or an older schema left
      // behind, computed now (a failure waits a backoff, as an outage does).
      if (!Connect() || !UpdateStaleChangePoints()) {
        if (connection_ && !connection_->ok()) connection_.reset();
        Wait(backoff);
        backoff = std::min(backoff * 2, options_.max_backoff);
        continue;
      }
      backoff = options_.min_backoff;
    }
    if (backlog.runs == 0) {
      if (down_ && exported_since_down_ > 0) {
        spdlog::info("fleet export: the fleet database answers again; caught up ({} run(s))",
                     exported_since_down_);
        down_ = false;
      }
      Wait(options_.poll);
      continue;
    }
    // Progress: on at once. The database away (-1), or every run of the batch refused (0): wait.
    int exported = -1;
    try {
      exported = ExportBatch();
    } catch (const std::exception& e) {
      // The SQLite side failed (busy past its timeout, a full disk): the outbox keeps the runs;
      // the thread must not die with an exception, which would end the daemon.
      spdlog::error("fleet export: {}", e.what());
    }
    if (exported > 0) {
      backoff = options_.min_backoff;
      continue;
    }
    Wait(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace ablation::core
