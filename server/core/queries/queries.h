// The read side of the API: runs, measurements and the measured half of Advise. Each request is
// validated on the caller's thread (errors name the field), then answered on the reader pool:
// `done` is called from a reader thread, or at once with the refusal.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "server/core/base/status.h"
#include "server/core/queries/reader_pool.h"
#include "server/core/runs/run_manager.h"

namespace ablation::core {

class Queries {
 public:
  template <typename Response>
  using Done = std::function<void(const Status&, const Response&)>;

  /// `runs` gives Advise the GPU whose measurements count (may be null: every GPU's).
  Queries(ReaderPool* readers, RunManager* runs) : readers_(readers), runs_(runs) {}

  void ListRuns(const v1::ListRunsRequest& request, Done<v1::ListRunsResponse> done);
  void GetRun(const v1::GetRunRequest& request, Done<v1::GetRunResponse> done);
  /// The run's row alone (no measurements): who asked for it, its state. NotFound naming it.
  void FindRun(int64_t run_id, Done<v1::Run> done);
  void QueryMeasurements(const v1::QueryMeasurementsRequest& request,
                         Done<v1::QueryMeasurementsResponse> done);
  void Advise(const v1::AdviseRequest& request, Done<v1::AdviseResponse> done);
  /// Series and their change points (server/core/history/). NotFound when the variant was never
  /// measured; InvalidArgument naming a bad field.
  void GetHistory(const v1::HistoryRequest& request, Done<v1::HistoryResponse> done);

 private:
  /// Runs `answer` on a reader with a fresh response; store errors become statuses.
  template <typename Response, typename Answer>
  void OnReader(Done<Response> done, Answer answer);

  ReaderPool* readers_;
  RunManager* runs_;
};

}  // namespace ablation::core
