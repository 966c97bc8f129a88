// The host plan of an sm90 rung's launch at one problem: which build runs it (the rung's own, its
// guarded build off the tile, on padded copies where TMA cannot address the rows, without
// clusters where the grid is fitted to its rounds) and that build's grid (CTAs, the persistent
// grid's size, the stream-K split and its workspace, the fitted grid). One plan, host code only:
// the launchers follow it (sm90_wgmma_launch.cuh), the worker's registry names the kernel it picks
// (what `sass`, `profile` and the occupancy checks read), the catalog describes it, and the tests
// check it without a GPU. The kernels read none of it but the StreamKArgs.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_schedule.h"
#include "kernels/sm90/sm90_shapes.h"

namespace ablation::kernels::sm90 {

/// The grid of one launch of `build` at a problem as its kernel sees it (padded N and K where the
/// operands are padded).
struct GridPlan {
  /// The knobs of the kernel that runs: those planned for, or them without clusters
  /// (Knobs::clusters_where_shared, `clusters_dropped`).
  Knobs build;
  bool clusters_dropped = false;
  int units = 0;  ///< work units (build.cluster_m x cluster_n tiles)
  int ctas = 0;   ///< CTAs of the grid
  /// The stream-K plan (dp_units, sk_clusters, sk_iters; the launch sets the pointers and epoch);
  /// all zeros for a build without stream-K, as its kernel is given them.
  StreamKArgs sk;
  int64_t partial_bytes = 0;  ///< the stream-K workspace's partial sums (0: none)
  int64_t flags = 0;          ///< and its flags
  /// The persistent grid shrunk to the fewest clusters that take the same rounds (fit_grid).
  bool fitted = false;

  int Clusters() const { return ctas / build.Ctas(); }
  /// Rounds of whole units a cluster walks (the units stream-K shares aside).
  int Rounds() const {
    const int c = Clusters(), whole = build.stream_k ? sk.dp_units : units;
    return c > 0 ? (whole + c - 1) / c : 0;
  }
};

/// The grid of `k` at `p` on a device holding `r` at once (read by persistent builds only; zeros:
/// unknown).
inline GridPlan PlanGrid(const Knobs& k, const Problem& p, const Residency& r) {
  GridPlan g;
  g.build = k;
  if (k.mainloop != Mainloop::kWgmma) {  // the mma.sync rungs: one CTA per block_n-wide tile
    g.units = int(((p.m + kBlockM - 1) / kBlockM) * ((p.n + k.block_n - 1) / k.block_n));
    g.ctas = g.units;
    return g;
  }
  g.units = int(UnitsOf(k, p.m, p.n));
  g.ctas = g.units * k.Ctas();
  if (k.persistent) {
    // Stream-K may share the units' k-tiles with every cluster that fits, also when there are
    // fewer units than clusters (a small M or N: one partial round); the grid is trimmed back to
    // the units below when the plan shares nothing.
    // An unknown device (zeros): a cluster per unit, so that nothing is fitted or dropped.
    int resident = k.Ctas() == 1 ? r.sms : r.pair_clusters;
    if (resident <= 0) resident = g.units;
    g.ctas = std::min(resident, k.stream_k ? INT_MAX : g.units) * k.Ctas();
    if (k.max_ctas > 0) g.ctas = std::min(g.ctas, k.max_ctas);
  }
  if (k.stream_k) {
    StreamKPlan(g.units, int((p.k + BlockK(k) - 1) / BlockK(k)), g.Clusters(), &g.sk,
                k.sk_max_full_quarters, k.sk_parts);
    if (g.sk.sk_clusters == 0) g.ctas = std::min(g.ctas, g.units * k.Ctas());
    if (g.sk.sk_clusters > 0) {  // else every unit goes whole: no partials, no flags
      // Partials and their flags per CTA of each unit of the shared round.
      const int64_t sk_ctas = int64_t(g.units - g.sk.dp_units) * k.Ctas();
      g.partial_bytes = sk_ctas * PartialBytesPerCta(k);
      g.flags = sk_ctas * PartialFlagsPerCta(k);
    }
  }
  // A last round left whole and more units than clusters: the grid is fitted, and the build
  // without clusters plans and launches it (its own units, rounds and fitted grid).
  if (k.clusters_where_shared && RunsWithoutClusters(g.sk, g.units, g.Clusters())) {
    GridPlan u = PlanGrid(Unclustered(k), p, r);
    u.clusters_dropped = true;
    return u;
  }
  // Only a last round that stream-K leaves whole: a shared one is what its clusters are for.
  if (k.fit_grid && g.sk.sk_clusters == 0) {
    const int fitted = FitGridClusters(g.units, g.Clusters()) * k.Ctas();
    g.fitted = fitted != g.ctas;
    g.ctas = fitted;
  }
  return g;
}

/// Where the build that runs a problem comes from and its grid.
struct LaunchPlan {
  ShapePlan shape;       ///< on the tile, or guarded; which operands are padded
  bool guarded = false;  ///< Guarded(rung) runs (off the tile, or on padded copies)
  Problem seen;          ///< the problem as the kernel sees it (padded N and K)
  GridPlan grid;         ///< of the build that runs (grid.build: its knobs, guarded included)
  Residency device;      ///< what the grid was planned for (zeros: unknown)
};

/// The plan of rung `rung` at `p` with operands at a, b and c (0: aligned, as the worker's
/// buffers are) on a device holding `r`.
inline LaunchPlan PlanLaunch(const Knobs& rung, const Problem& p, const Residency& r,
                             uintptr_t a = 0, uintptr_t b = 0, uintptr_t c = 0) {
  LaunchPlan l;
  l.shape = PlanShape(p, rung, a, b, c);
  l.guarded = l.shape.Pads() || !l.shape.on_tile;
  l.seen = p;
  if (l.shape.pad_c) l.seen.n = l.shape.n;
  if (l.shape.pad_a || l.shape.pad_b) l.seen.k = l.shape.k;
  Knobs build = rung;
  build.guarded = build.guarded || l.guarded;
  l.grid = PlanGrid(build, l.seen, r);
  l.device = r;
  return l;
}

/// The plan in words, as the catalog and `sass` name the build: "own build" / "guarded build" /
/// "guarded build on padded copies of A, C", then the grid ("128 CTAs without clusters (the
/// rung's clusters dropped: the grid is fitted to its rounds), 2 rounds"). Where the device is
/// unknown, a persistent grid is "as many CTAs as the device holds".
std::string DescribeLaunch(const LaunchPlan& l);

}  // namespace ablation::kernels::sm90
