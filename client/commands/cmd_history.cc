#include "client/commands/cmd_history.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/validators.h"
#include "client/output/enum_words.h"
#include "client/output/format.h"
#include "client/output/table.h"
#include "client/report/report.h"
#include "client/sources/source.h"

namespace ablation::client {
namespace {

std::string Percent(double relative) {
  return (relative >= 0 ? "+" : "") + FormatFixed(100 * relative, 2) + "%";
}

std::string SeriesTitle(const v1::Series& s) {
  std::string regime = EnumWord(s.regime());
  const std::string l2 = EnumWord(s.l2());
  return s.variant() + "  " + s.dtype() + "  " + FormatShape(s.shape()) + "  " +
         (regime.empty() ? "no regime" : regime) + (l2.empty() ? "" : "  L2 " + l2) + "  on " +
         (s.device_name().empty() ? "?" : s.device_name()) + " (fingerprint " +
         (s.hardware_fingerprint().empty() ? "none: stored before v15" : s.hardware_fingerprint()) +
         ")";
}

Table SeriesTable(const v1::Series& s) {
  // A fleet's series names each point's daemon: run ids are each daemon's own.
  const bool fleet = !s.points().empty() && !s.points(0).node().empty();
  Table t;
  t.columns = {{"run_id", "run", Align::kRight},          {"created_at", "date"},
               {"median_ms", "median ms", Align::kRight}, {"noise_pct", "noise", Align::kRight},
               {"tflops", "TFLOPS", Align::kRight},       {"change", "change"}};
  int next_change = 0;
  for (const v1::HistoryPoint& p : s.points()) {
    std::string change;
    if (p.change_point() && next_change < s.change_points_size()) {
      const v1::ChangePoint& c = s.change_points(next_change++);
      change = std::string(c.relative_change() > 0 ? "^ slower " : "v faster ") +
               Percent(c.relative_change()) + " (p " + FormatSignificant(c.p_value(), 2) + ")";
    }
    // A user variant that ran other code from this point: said beside any change it made.
    if (!p.build_change().empty())
      change += (change.empty() ? "" : "; ") + std::string("code: ") + p.build_change();
    t.rows.push_back({Cell(std::to_string(p.run_id())), Cell(FormatTimeMs(p.time_ms())),
                      Cell(FormatSignificant(p.median_ms(), 4), FormatExact(p.median_ms())),
                      Cell(Percent(p.noise()).substr(1), FormatExact(p.noise() * 100)),
                      Cell(FormatFixed(p.tflops(), 1), FormatExact(p.tflops())), Cell(change)});
    if (fleet) t.rows.back().insert(t.rows.back().begin(), Cell(p.node()));
  }
  if (fleet) t.columns.insert(t.columns.begin(), Column{"node", "node"});
  return t;
}

std::string HistoryText(const v1::HistoryResponse& h, Format format) {
  std::string out;
  for (const v1::Series& s : h.series()) {
    if (!out.empty()) out += "\n";
    out += (format == Format::kMarkdown ? "### " : "") + SeriesTitle(s) + "\n";
    if (format == Format::kMarkdown) out += "\n";
    out += RenderTableAs(format, SeriesTable(s));
    const v1::NewestShift& n = s.newest();
    if (n.candidate()) {
      out += "newest run " + Percent(n.relative_change()) + " against the " +
             std::to_string(n.baseline_points()) + " before it (beyond " +
             Percent(n.threshold()).substr(1) + "): a candidate change, to confirm by a rerun\n";
    }
  }
  return out;
}

}  // namespace

std::string HistoryTitle(const HistoryOptions& options) {
  std::string what = options.variant;
  for (const auto& [flag, value] :
       {std::pair{"dtype", options.dtype}, std::pair{"shape", options.shape},
        std::pair{"device", options.device}, std::pair{"regime", options.regime},
        std::pair{"since", options.since}, std::pair{"tag", options.tag}})
    if (!value.empty()) what += std::string(", ") + flag + " " + value;
  if (options.run_id > 0) what += ", in run " + std::to_string(options.run_id);
  return what;
}

CLI::App* SetupHistory(CLI::App& app, HistoryOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "history", "A variant's series over stored runs, with change points (E-divisive means)");
  sub->add_option("variant", options.variant, "Variant name, short name or glob")
      ->required()
      ->type_name("VARIANT");
  sub->add_option("--dtype", options.dtype, "Only this dtype: " + DTypeWordsHelp())
      ->transform(DTypeTransformer());
  sub->add_option("--shape", options.shape, "MxNxK, or N for NxNxN")->check(ShapeValidator());
  sub->add_option("--device", options.device, "Only runs on this GPU (an index or a UUID)");
  sub->add_option("--regime", options.regime, "Only this power regime: sustained, burst, locked")
      ->check([](const std::string& text) -> std::string {
        v1::Regime regime;
        return ParseEnumWord("", text, &regime);
      });
  sub->add_option("--since", options.since,
                  "Runs started from this time on: 2026-11-30, 2026-11-30T12:00:00Z or unix ms")
      ->check(TimeValidator());
  sub->add_option("--tag", options.tag, "Only runs with this tag (nightly)");
  sub->add_option("--in-run", options.run_id, "Only the series that have a point in this run")
      ->check(WholeNumber(1));
  sub->add_option("--node", options.node,
                  "With --fleet-db: only this daemon's points (a host name, HOST/ID-PREFIX or a "
                  "daemon id's prefix)");
  return sub;
}

v1::HistoryRequest BuildHistoryRequest(const HistoryOptions& options) {
  v1::HistoryRequest request;
  request.set_variant_glob(options.variant);
  request.set_dtype(options.dtype);
  if (!options.shape.empty()) *request.mutable_shape() = ParseShapeOrThrow(options.shape);
  request.set_device(options.device);
  if (!options.regime.empty()) {
    v1::Regime regime = v1::REGIME_UNSPECIFIED;
    ParseEnumWord("--regime", options.regime, &regime);  // checked by the option's validator
    request.set_regime(regime);
  }
  if (!options.since.empty()) request.set_since_ms(ParseTimeMsOrThrow(options.since));
  request.set_tag(options.tag);
  request.set_run_id(options.run_id);
  return request;
}

std::string HistoryCsv(const v1::HistoryResponse& history) {
  // `node` (a fleet's daemon, '' from one daemon) is last, so readers of the older columns keep
  // theirs.
  Table t;
  t.columns = {{"hardware_fingerprint", ""},
               {"variant", ""},
               {"dtype", ""},
               {"m", ""},
               {"n", ""},
               {"k", ""},
               {"regime", ""},
               {"l2", ""},
               {"device_uuid", ""},
               {"run_id", ""},
               {"created_at", ""},
               {"median_ms", ""},
               {"noise_pct", ""},
               {"tflops", ""},
               {"change_point", ""},
               {"relative_change", ""},
               {"node", ""},
               {"user_build_id", ""},
               {"version", ""},
               {"build_change", ""}};
  for (auto& c : t.columns) c.title = c.key;
  for (const v1::Series& s : history.series()) {
    int next_change = 0;
    for (const v1::HistoryPoint& p : s.points()) {
      std::string relative;
      if (p.change_point() && next_change < s.change_points_size())
        relative = FormatExact(s.change_points(next_change++).relative_change());
      t.rows.push_back({s.hardware_fingerprint(),
                        s.variant(),
                        s.dtype(),
                        std::to_string(s.shape().m()),
                        std::to_string(s.shape().n()),
                        std::to_string(s.shape().k()),
                        EnumWord(s.regime()),
                        EnumWord(s.l2()),
                        s.device_uuid(),
                        std::to_string(p.run_id()),
                        FormatTimeMs(p.time_ms()),
                        FormatExact(p.median_ms()),
                        FormatExact(p.noise() * 100),
                        FormatExact(p.tflops()),
                        p.change_point() ? "1" : "0",
                        relative,
                        p.node(),
                        p.user_build_id() > 0 ? std::to_string(p.user_build_id()) : "",
                        p.version() > 0 ? std::to_string(p.version()) : "",
                        p.build_change()});
    }
  }
  return RenderCsv(t);
}

int ExecuteHistory(const HistoryOptions& options, const CommandContext& context) {
  const v1::HistoryRequest request = BuildHistoryRequest(options);
  v1::HistoryResponse history;
  if (int code = OpenSource(context)->History(request, options.node, &history); code != kExitOk)
    return code;
  switch (context.global.format) {
    case Format::kJson: {
      std::vector<v1::Series> series(history.series().begin(), history.series().end());
      context.out << JsonEnvelope(
          "history", series,
          {{"min_relative_change", FormatExact(history.min_relative_change())},
           {"significance", FormatExact(history.significance())}});
      break;
    }
    case Format::kCsv:
      context.out << HistoryCsv(history);
      break;
    case Format::kHtml:  // a page of its own, as `report --format html` is: charts and tables
      context.out << report::RenderHistoryHtml(history, HistoryTitle(options));
      break;
    default:
      if (history.series().empty()) {
        context.err << "no ok measurements of " << options.variant << " match\n";
      } else {
        context.out << HistoryText(history, context.global.format);
      }
  }
  return kExitOk;
}

}  // namespace ablation::client
