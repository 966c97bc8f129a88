// TEST DOUBLE, never installed: a GPU at its power cap, shared by the fake worker (which runs the
// kernels on virtual time and so decides the clock and the energy) and the stand-in NVML (which
// the daemon reads the board's power, clock, clock-event reasons and energy counter from). The two
// are different processes; the worker writes the board's state to a small file after every task,
// before its reply, and the stand-in NVML reads it at every call.
//
// The model, so that the CPU suite can prove the solo method instead of trusting it:
//  - each variant draws P(f) = static_w + draw_w * (f / f_max)^2 at SM clock f, where draw_w is
//    its dynamic power at the maximum clock (ABLATION_FAKE_DRAW): kernels differ in power per
//    cycle, as the H200's ladders do;
//  - the power controller sees the draw averaged over its lag (an exponential average over
//    tau_s of GPU time), and sets the clock at which that average would meet the cap:
//    f* = min(f_max, f_max * sqrt((cap_w - static_w) / draw_avg)); the clock then oscillates
//    around f* by +-0.3% with a period of one second of GPU time, as the H200's does;
//  - a pause of 0.1 s or more between tasks idles the GPU: the average starts again from 0, so
//    the next task begins at the maximum clock (burst), and the stand-in NVML reads an idle board.
// A variant measured alone settles at f_v = f_max * sqrt((cap_w - static_w) / draw_v), draws
// exactly cap_w there, and so spends cap_w * t per launch; in a window shared with others the
// clock follows the window's mix. Energy counts only GPU time (the fake has no idle gaps).
//
// Environment (read by both sides):
//   ABLATION_FAKE_GPU_STATE=path       the state file (both must name the same one)
//   ABLATION_FAKE_POWER_CAP=cap_w:static_w:tau_s   the cap model (worker); e.g. 700:140:0.5
//   ABLATION_FAKE_DRAW=variant=W[,...][,*=W]       dynamic draw at f_max per variant (worker);
//                                                  default 600 W
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace ablation::fake {

inline constexpr double kFakeMaxSmMhz = 1980;
/// A pause longer than this between tasks idles the fake GPU.
inline constexpr double kIdleAfterSeconds = 0.1;
/// The board's power when idle, as the stand-in NVML reports it.
inline constexpr double kIdlePowerW = 90;

struct PowerCap {
  double cap_w = 0;  ///< 0: no cap model
  double static_w = 140;
  double tau_s = 0.5;
  double oscillation = 0.003;
  double period_s = 1.0;

  bool enabled() const { return cap_w > 0; }
  /// The clock at which a draw of `draw_w` (dynamic, at f_max) meets the cap.
  double CapClock(double draw_w) const {
    if (draw_w <= 0) return kFakeMaxSmMhz;
    return std::min(kFakeMaxSmMhz, kFakeMaxSmMhz * std::sqrt((cap_w - static_w) / draw_w));
  }
  double PowerAt(double draw_w, double mhz) const {
    const double x = mhz / kFakeMaxSmMhz;
    return static_w + draw_w * x * x;
  }
};

/// "cap_w:static_w:tau_s" (the last two optional).
inline PowerCap ParsePowerCap(const std::string& spec) {
  PowerCap p;
  if (spec.empty()) return p;
  double v[3] = {0, p.static_w, p.tau_s};
  size_t b = 0;
  for (int i = 0; i < 3 && b <= spec.size(); ++i) {
    size_t e = spec.find(':', b);
    if (e == std::string::npos) e = spec.size();
    if (e > b) v[i] = std::stod(spec.substr(b, e - b));
    b = e + 1;
  }
  p.cap_w = v[0];
  p.static_w = v[1];
  p.tau_s = std::max(1e-3, v[2]);
  return p;
}

/// The dynamic draw of `variant` from "name=W,...,*=W"; 600 W where nothing names it.
inline double DrawOf(const std::string& spec, const std::string& variant) {
  double fallback = 600;
  for (size_t b = 0; b < spec.size();) {
    size_t e = spec.find(',', b);
    if (e == std::string::npos) e = spec.size();
    const std::string item = spec.substr(b, e - b);
    const size_t eq = item.rfind('=');
    if (eq != std::string::npos) {
      const std::string name = item.substr(0, eq);
      if (name == variant) return std::stod(item.substr(eq + 1));
      if (name == "*") fallback = std::stod(item.substr(eq + 1));
    }
    b = e + 1;
  }
  return fallback;
}

/// What the board looked like at the end of the fake worker's last task.
struct BoardState {
  double energy_mj = 0;   ///< since the fake "driver" loaded: never decreases
  double power_w = 0;     ///< mean board power over the last task's GPU time
  double sm_mhz = 0;      ///< the clock at its end
  bool capped = false;    ///< the clock was held below f_max by the cap
  double ended_unix = 0;  ///< wall time (seconds since the epoch) the task ended

  bool Busy(double now_unix) const { return now_unix - ended_unix < kIdleAfterSeconds; }
};

inline std::string StatePath() {
  const char* p = std::getenv("ABLATION_FAKE_GPU_STATE");
  return p ? p : "";
}

inline bool ReadBoardState(const std::string& path, BoardState* out) {
  std::ifstream in(path);
  int capped = 0;
  if (!(in >> out->energy_mj >> out->power_w >> out->sm_mhz >> capped >> out->ended_unix))
    return false;
  out->capped = capped != 0;
  return true;
}

/// Written whole to a temporary file and renamed over the state, so a reader never sees half.
inline void WriteBoardState(const std::string& path, const BoardState& s) {
  const std::string tmp = path + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fprintf(f, "%.6f %.6f %.6f %d %.6f\n", s.energy_mj, s.power_w, s.sm_mhz, s.capped ? 1 : 0,
                 s.ended_unix);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
  }
}

/// The controller of one fake GPU over GPU time: Step(draw, cycles) runs one launch of `cycles`
/// SM cycles of a variant whose dynamic draw is `draw` and returns its duration in ms.
class PowerController {
 public:
  explicit PowerController(PowerCap cap) : cap_(cap) {}

  /// The GPU idled: the controller's average starts again.
  void Idle() {
    average_draw_ = 0;
    busy_s_ = 0;
  }
  double busy_seconds() const { return busy_s_; }

  /// The clock the next launch runs at.
  double Clock() const {
    const double target = cap_.CapClock(average_draw_);
    const double wobble = 1 + cap_.oscillation * std::sin(2 * M_PI * busy_s_ / cap_.period_s);
    return std::min(kFakeMaxSmMhz, target * wobble);
  }
  bool Capped() const { return cap_.CapClock(average_draw_) < kFakeMaxSmMhz; }

  /// One launch at Clock(): its time in ms; adds its energy.
  double Step(double draw_w, double cycles, double* energy_j) {
    const double mhz = Clock();
    const double seconds = cycles / (mhz * 1e6);
    *energy_j += cap_.PowerAt(draw_w, mhz) * seconds;
    const double keep = std::exp(-seconds / cap_.tau_s);
    average_draw_ = draw_w + (average_draw_ - draw_w) * keep;
    busy_s_ += seconds;
    return seconds * 1e3;
  }

 private:
  PowerCap cap_;
  double average_draw_ = 0;
  double busy_s_ = 0;
};

}  // namespace ablation::fake
