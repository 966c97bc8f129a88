#include "server/core/convert.h"

namespace ablation::core {

v1::DeviceIdentity ToProto(const db::DeviceIdentity& d) {
  v1::DeviceIdentity p;
  p.set_index(d.index);
  p.set_name(d.name);
  p.set_uuid(d.uuid);
  p.set_compute_capability(d.compute_capability);
  p.set_sm_count(d.sm_count);
  p.set_driver_version(d.driver_version);
  p.set_cuda_runtime_version(d.cuda_runtime_version);
  p.set_cublas_version(d.cublas_version);
  p.set_memory_bytes(d.memory_bytes);
  p.set_l2_bytes(d.l2_bytes);
  p.set_smem_per_block_optin(d.smem_per_block_optin);
  p.set_smem_per_sm(d.smem_per_sm);
  return p;
}

db::DeviceIdentity ToRecord(const v1::DeviceIdentity& p) {
  db::DeviceIdentity d;
  d.index = p.index();
  d.name = p.name();
  d.uuid = p.uuid();
  d.compute_capability = p.compute_capability();
  d.sm_count = p.sm_count();
  d.driver_version = p.driver_version();
  d.cuda_runtime_version = p.cuda_runtime_version();
  d.cublas_version = p.cublas_version();
  d.memory_bytes = p.memory_bytes();
  d.l2_bytes = p.l2_bytes();
  d.smem_per_block_optin = p.smem_per_block_optin();
  d.smem_per_sm = p.smem_per_sm();
  return d;
}

v1::Telemetry ToProto(const db::Telemetry& t) {
  v1::Telemetry p;
  p.set_available(t.available);
  p.set_unavailable_reason(t.note);
  p.set_sm_clock_mhz_mean(t.sm_clock_mhz_mean);
  p.set_sm_clock_mhz_min(t.sm_clock_mhz_min);
  p.set_sm_clock_mhz_max(t.sm_clock_mhz_max);
  p.set_mem_clock_mhz_mean(t.mem_clock_mhz_mean);
  p.set_mem_clock_mhz_min(t.mem_clock_mhz_min);
  p.set_mem_clock_mhz_max(t.mem_clock_mhz_max);
  p.set_power_w_mean(t.power_w_mean);
  p.set_power_w_min(t.power_w_min);
  p.set_power_w_max(t.power_w_max);
  p.set_temperature_c_mean(t.temperature_c_mean);
  p.set_temperature_c_min(t.temperature_c_min);
  p.set_temperature_c_max(t.temperature_c_max);
  for (const auto& reason : t.throttle_reasons) p.add_throttle_reasons(reason);
  p.set_throttled_samples(t.throttled_samples);
  return p;
}

v1::Measurement ToProto(const db::MeasurementRecord& r) {
  v1::Measurement m;
  m.set_id(r.id);
  m.set_run_id(r.run_id);
  m.set_sequence(r.sequence);
  m.set_variant(r.variant);
  m.set_dtype(r.dtype);
  m.mutable_shape()->set_m(r.m);
  m.mutable_shape()->set_n(r.n);
  m.mutable_shape()->set_k(r.k);
  m.set_status(r.status);
  m.set_error(r.error);
  auto* s = m.mutable_stats();
  s->set_median_ms(r.stats.median_ms);
  s->set_mean_ms(r.stats.mean_ms);
  s->set_stddev_ms(r.stats.stddev_ms);
  s->set_min_ms(r.stats.min_ms);
  s->set_max_ms(r.stats.max_ms);
  s->set_q1_ms(r.stats.q1_ms);
  s->set_q3_ms(r.stats.q3_ms);
  s->set_samples(r.stats.samples);
  s->set_noise(r.stats.noise);
  s->set_total_seconds(r.stats.total_seconds);
  m.set_tflops(r.tflops);
  m.set_bytes_per_second(r.bytes_per_second);
  m.set_fragment_loads_per_second(r.fragment_loads_per_second);
  m.set_l2(r.l2);
  m.set_clock_policy(r.clock_policy);
  m.set_verification(r.verification);
  *m.mutable_telemetry() = ToProto(r.telemetry);
  auto* o = m.mutable_occupancy();
  o->set_registers_per_thread(r.occupancy.registers_per_thread);
  o->set_static_smem_bytes(r.occupancy.static_smem_bytes);
  o->set_dynamic_smem_bytes(r.occupancy.dynamic_smem_bytes);
  o->set_local_bytes_per_thread(r.occupancy.local_bytes_per_thread);
  o->set_max_blocks_per_sm(r.occupancy.max_blocks_per_sm);
  o->set_max_warps_per_sm(r.occupancy.max_warps_per_sm);
  o->set_theoretical_occupancy(r.occupancy.theoretical_occupancy);
  o->set_limiter(r.occupancy.limiter);
  o->set_threads_per_block(r.occupancy.threads_per_block);
  for (double x : r.sample_ms) m.add_sample_ms(x);
  m.set_created_at_ms(r.created_at_ms);
  return m;
}

v1::Run ToProto(const db::RunRecord& r) {
  v1::Run p;
  p.set_id(r.id);
  p.set_kind(r.kind);
  p.set_state(r.state);
  *p.mutable_device() = ToProto(r.device);
  p.set_daemon_version(r.daemon_version);
  p.set_git_revision(r.git_revision);
  p.set_request_json(r.request_json);
  p.set_requested_by(r.requested_by);
  for (const auto& t : r.tags) p.add_tags(t);
  p.set_created_at_ms(r.created_at_ms);
  p.set_started_at_ms(r.started_at_ms);
  p.set_finished_at_ms(r.finished_at_ms);
  p.set_error(r.error);
  p.set_planned(r.planned);
  p.set_ok(r.ok);
  p.set_failed(r.failed);
  p.set_clock_policy(r.clock_policy);
  return p;
}

v1::VerifyResult ToProto(const db::VerificationRecord& r) {
  v1::VerifyResult p;
  p.set_variant(r.variant);
  p.set_dtype(r.dtype);
  p.mutable_shape()->set_m(r.m);
  p.mutable_shape()->set_n(r.n);
  p.mutable_shape()->set_k(r.k);
  p.set_against(r.against);
  p.set_max_abs_error(r.max_abs);
  p.set_max_rel_error(r.max_rel);
  p.set_rel_frobenius_error(r.rel_frobenius);
  p.set_mismatches(r.mismatches);
  p.set_nan_count(r.nan_count);
  p.set_unwritten_count(r.unwritten_count);
  p.set_tolerance(r.tolerance);
  p.set_passed(r.passed);
  p.set_error(r.error);
  return p;
}

db::VerificationRecord ToRecord(const v1::VerifyResult& p) {
  db::VerificationRecord r;
  r.variant = p.variant();
  r.dtype = p.dtype();
  r.m = p.shape().m();
  r.n = p.shape().n();
  r.k = p.shape().k();
  r.against = p.against();
  r.max_abs = p.max_abs_error();
  r.max_rel = p.max_rel_error();
  r.rel_frobenius = p.rel_frobenius_error();
  r.mismatches = p.mismatches();
  r.nan_count = p.nan_count();
  r.unwritten_count = p.unwritten_count();
  r.tolerance = p.tolerance();
  r.passed = p.passed();
  r.error = p.error();
  return r;
}

}  // namespace ablation::core
