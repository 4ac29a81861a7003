#include "sched/task_codec.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/yaml.h"
#include "sched/options_codec.h"

using namespace magpie;
using namespace magpie::kernel;
using namespace magpie::sched;

TEST(task_codec, request_round_trip_keeps_every_field) {
  eval_request r;
  r.mode = kernel::run_mode::compare;
  kernel_spec k;
  k.id = "k1";
  k.type = kernel_type::triton;
  k.source_files = {"/a/k.py"};
  k.working_dir = "/a";
  k.env = {{"PATH", "/opt/bin"}, {"X", "1"}};
  k.compile_command = {{"make", "-j2"}, {"true"}};
  k.testcase_command = {{"python3", "-m", "t"}};
  k.prof_command = {{"ncu", "x"}};
  k.target = bench_target{"mod", "fn", "gi"};
  k.get_inputs_func = "inputs";
  k.get_init_inputs_func = "init";
  k.entry = "Model";
  k.inputs_from = "/a/in.py";
  k.origin = "k.yaml:3:5";
  r.kernels = {k, k};
  r.kernels[1].id = "k2";
  r.kernels[1].target.reset();
  r.reference = k;
  r.reference->id = "ref";
  r.baseline_index = 1;
  r.correctness.method = correctness_method::outputs;
  r.correctness.trials = 9;
  r.correctness.seed = 1234567890123ull;
  r.correctness.fp16 = {0.5, 0.25};
  r.correctness.check_mutation = false;
  r.correctness.timeout_s = 12;
  r.timing.warmup = 3;
  r.timing.max_noise = 0.01;
  r.timing.cold = false;
  r.timing.max_samples = 77;
  r.timing.flush_bytes = 1u << 20;
  r.compare.same_tolerance = 0.05;
  r.compare.bootstrap_resamples = 100;
  r.performance.enabled = false;
  r.performance.backend = kernel::profiler_backend::cupti;
  r.performance.ncu_args = {"--set", "full"};
  r.enable_default_compile = true;
  r.output_dir = "/out";
  r.config_file = "/a/k.yaml";
  r.raw_config = {{"kernels", json::array()}};
  json j = request_to_json(r, {});
  auto back = request_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.get_status().message();
  EXPECT_EQ(request_to_json(*back, {}), j);
  EXPECT_EQ(*back->correctness.seed, 1234567890123ull);
  EXPECT_EQ(back->kernels[0].compile_command, k.compile_command);
  EXPECT_EQ(back->kernels[0].env, k.env);
  ASSERT_TRUE(back->kernels[0].target.has_value());
  EXPECT_FALSE(back->kernels[1].target.has_value());
  EXPECT_EQ(back->reference->id, "ref");
  EXPECT_EQ(back->mode, run_mode::compare);
  EXPECT_EQ(back->correctness.method, correctness_method::outputs);
  EXPECT_EQ(back->timing.max_samples, 77);
  EXPECT_EQ(back->timing.flush_bytes, 1u << 20);
  EXPECT_EQ(back->performance.backend, kernel::profiler_backend::cupti);
}

TEST(task_codec, unset_seed_and_bad_input) {
  eval_request r;
  kernel_spec k;
  k.type = kernel_type::host;
  r.kernels = {k};
  auto back = request_from_json(request_to_json(r, {})).value();
  EXPECT_FALSE(back.correctness.seed.has_value());
  EXPECT_EQ(back.kernels[0].type, kernel_type::host);
  EXPECT_FALSE(request_from_json(json::array()).ok());
  auto bad_mode = request_from_json({{"mode", "benchmark"}, {"kernels", json::array()}});
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.get_status().message().find("'mode'"), std::string::npos);
  EXPECT_FALSE(request_from_json({{"kernels", {{{"type", "host"}}}}}).ok());  // no id
  EXPECT_FALSE(request_from_json({{"kernels", {{{"id", "x"}, {"type", "fortran"}}}}}).ok());
}

TEST(scheduler_section, parses_magpie_and_slurm_keys) {
  auto root = parse_yaml(
                  "scheduler:\n  environment: SLURM\n  max_workers: 4\n  gpu_devices: [0, 1]\n  docker_image: img\n"
                  "  partition: gpu\n  account: proj\n  gres: gpu:h200:1\n  time_limit: '10:00'\n  shared_dir: /nfs/m\n"
                  "  sbatch_args: [--exclusive]\n  setup: [module load cuda]\n  cpus_per_task: 8\n  wait: false\n"
                  "  timeout_seconds: 300\n",
                  "s.yaml")
                  .value();
  scheduler_options so;
  ASSERT_TRUE(parse_scheduler_section(*root.get("scheduler"), "scheduler", &so).ok());
  EXPECT_EQ(so.environment, run_environment::slurm);
  EXPECT_EQ(so.max_workers, 4);
  EXPECT_EQ(so.gpu_devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(so.gres, "gpu:h200:1");
  EXPECT_EQ(so.time_limit, "10:00");
  EXPECT_EQ(so.sbatch_args, std::vector<std::string>{"--exclusive"});
  EXPECT_EQ(so.cpus_per_task, 8);
  EXPECT_FALSE(so.wait);
  auto bad = parse_yaml("scheduler: {environment: kubernetes}\n", "b.yaml").value();
  auto st = parse_scheduler_section(*bad.get("scheduler"), "scheduler", &so);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("b.yaml:1"), std::string::npos) << st.message();
  auto unknown = parse_yaml("scheduler: {partiton: gpu}\n", "u.yaml").value();
  EXPECT_FALSE(parse_scheduler_section(*unknown.get("scheduler"), "scheduler", &so).ok());
}

// Where a kernel YAML runs is sched's to read: load_kernel_config accepts the scheduler: and
// ray_config: sections unread (eval_request has no scheduler), load_scheduler_sections reads
// them from the same file, and a ray_config section alone means Ray.
TEST(scheduler_section, read_from_the_kernel_yaml_by_sched_only) {
  fs::path dir = make_temp_dir("/tmp", "magpie_sched_yaml_").value();
  scoped_dir cleanup(dir);
  ASSERT_TRUE(write_file_atomic(dir / "host.cpp", "int main() { return 0; }\n").ok());
  ASSERT_TRUE(write_file_atomic(dir / "k.yaml",
                                "kernel:\n  type: host\n  source_files: [host.cpp]\n"
                                "scheduler:\n  partition: gpu\n  time_limit: '5:00'\n"
                                "ray_config:\n  cluster_address: http://head:8265\n")
                  .ok());
  eval_request req;
  ASSERT_TRUE(load_kernel_config(dir / "k.yaml", &req).ok());
  EXPECT_EQ(req.kernels.size(), 1u);
  scheduler_options so;
  ASSERT_TRUE(load_scheduler_sections(dir / "k.yaml", &so).ok());
  EXPECT_EQ(so.environment, run_environment::ray);
  EXPECT_EQ(so.partition, "gpu");
  EXPECT_EQ(so.time_limit, "5:00");
  EXPECT_EQ(so.ray.cluster_address, "http://head:8265");
  ASSERT_TRUE(write_file_atomic(dir / "bad.yaml", "kernel:\n  type: host\n  source_files: [host.cpp]\n"
                                                  "scheduler:\n  partiton: gpu\n")
                  .ok());
  eval_request req2;
  EXPECT_TRUE(load_kernel_config(dir / "bad.yaml", &req2).ok());
  scheduler_options so2;
  auto st = load_scheduler_sections(dir / "bad.yaml", &so2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bad.yaml:5"), std::string::npos) << st.message();
}

// scheduler.environment / -e and batch.json's engine are enums with one spelling each: every
// word round-trips, an unknown -e word is an error naming it, container is refused by
// check_environment (upstream Magpie's stub), and the report writes the word.
TEST(scheduler_section, environment_and_engine_words) {
  for (auto e : {run_environment::local, run_environment::container, run_environment::ray, run_environment::slurm})
    EXPECT_EQ(parse_run_environment(run_environment_name(e)), e);
  for (auto k : {engine_kind::slurm, engine_kind::ray}) EXPECT_EQ(parse_engine_kind(engine_kind_name(k)), k);
  EXPECT_FALSE(parse_run_environment("SLURM").has_value());  // YAML values are lower-cased by the reader
  EXPECT_FALSE(environment_from_flag("").value().has_value());
  EXPECT_EQ(environment_from_flag("ray").value(), run_environment::ray);
  auto bad = environment_from_flag("k8s");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.get_status().message(), "unknown environment 'k8s' (local, slurm, ray)");
  EXPECT_TRUE(check_environment(std::nullopt).ok());
  EXPECT_TRUE(check_environment(run_environment::slurm).ok());
  EXPECT_FALSE(check_environment(run_environment::container).ok());
  scheduler_options so;
  EXPECT_EQ(scheduler_options_json(so)["environment"], "local");  // unset reads as local
  so.environment = run_environment::slurm;
  EXPECT_EQ(scheduler_options_json(so)["environment"], "slurm");
}
