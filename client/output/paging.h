// The List calls that come in pages (ListRuns, QueryMeasurements): one loop that follows the page
// tokens up to a limit.
#pragma once

#include <algorithm>
#include <vector>

#include <grpcpp/support/status.h>

namespace ablation::client {

inline constexpr int kMaxPageSize = 1000;  // the API's cap

// Calls `call(request, &response)` page after page and appends `items(response)` to `out`, up to
// `limit` items (0: all). `more` says whether the limit cut the list short. Returns the status of
// the first call that failed, or OK.
template <class Request, class Response, class Item, class Call, class Items>
grpc::Status CollectPages(Request request, int limit, const Call& call, const Items& items,
                          std::vector<Item>* out, bool* more) {
  *more = false;
  auto full = [&] { return limit > 0 && static_cast<int>(out->size()) >= limit; };
  while (true) {
    request.set_page_size(
        limit == 0 ? kMaxPageSize : std::min(kMaxPageSize, limit - static_cast<int>(out->size())));
    Response response;
    grpc::Status status = call(request, &response);
    if (!status.ok()) return status;
    for (const Item& item : items(response)) {
      if (full()) {
        *more = true;
        break;
      }
      out->push_back(item);
    }
    if (full()) {
      *more = *more || !response.next_page_token().empty();
      return grpc::Status::OK;
    }
    // A token that does not move would page forever.
    if (response.next_page_token().empty() || response.next_page_token() == request.page_token())
      return grpc::Status::OK;
    request.set_page_token(response.next_page_token());
  }
}

}  // namespace ablation::client
