#include "serve/launcher.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>

#include "core/log.h"
#include "core/strings.h"
#include "serve/server_plan_printer.h"

namespace magpie::serve {

bool is_secret_env(const std::string& key) {
  std::string k = to_lower(key);
  for (const char* s : {"token", "secret", "password", "passwd", "api_key", "apikey", "credential"})
    if (contains(k, s)) return true;
  return false;
}

std::string parse_version(const std::string& text) {
  static const std::regex re(R"((\d+)\.(\d+)(?:\.(\d+))?)");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return {};
  return m[3].matched ? m[1].str() + "." + m[2].str() + "." + m[3].str() : m[1].str() + "." + m[2].str();
}

bool version_at_least(const std::string& a, const std::string& b) {
  auto pa = split(a, '.'), pb = split(b, '.');
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    int64_t x = i < pa.size() ? parse_int(pa[i]).value_or(0) : 0, y = i < pb.size() ? parse_int(pb[i]).value_or(0) : 0;
    if (x != y) return x > y;
  }
  return true;
}

status_or<std::string> default_image(serving_framework framework, const std::string& vendor, const std::string& arch) {
  bool amd = vendor == "AMD" || starts_with(arch, "gfx");
  if (framework == serving_framework::vllm) return std::string(amd ? "vllm/vllm-openai-rocm:v0.19.1" : "vllm/vllm-openai:v0.19.1");
  if (framework == serving_framework::sglang) {
    if (!amd) return std::string("lmsysorg/sglang:v0.5.8-cu130-amd64-runtime");
    if (arch == "gfx950") return std::string("lmsysorg/sglang:v0.5.12-rocm720-mi35x");
    return std::string("lmsysorg/sglang:v0.5.12-rocm720-mi30x");
  }
  if (!amd) return invalid_argument("atom has no NVIDIA image (ROCm only); give --docker-image or use --run-mode local");
  return std::string("rocm/atom:latest");
}

namespace {

std::string expand_home(const std::string& p) {
  if (starts_with(p, "~/")) {
    const char* h = std::getenv("HOME");
    return std::string(h ? h : "") + p.substr(1);
  }
  return p;
}

void append_split(std::vector<std::string>& argv, const std::string& s) {
  for (auto& a : split_whitespace(s)) argv.push_back(a);
}

std::vector<std::string> dtype_args(const std::string& precision) {
  if (precision == "fp16") return {"--dtype", "float16"};
  if (precision == "bf16") return {"--dtype", "bfloat16"};
  return {};  // fp8 / fp4 / mxfp4 checkpoints carry their quantization config
}

/// True when the user's EXTRA_*_ARGS already set one of `flags` (then magpie adds none).
bool extra_sets(const std::string& extra, std::initializer_list<const char*> flags) {
  for (const auto& tok : split_whitespace(extra))
    for (const char* f : flags)
      if (tok == f || starts_with(tok, std::string(f) + "=")) return true;
  return false;
}

/// vLLM's --max-model-len: MAX_MODEL_LEN, else Magpie's script default 4096 (raised to fit
/// ISL + OSL).
int64_t max_model_len(const benchmark_config& c) {
  int64_t need = c.env_int("ISL", 1024) + c.env_int("OSL", 512) + 64;
  return c.env_int("MAX_MODEL_LEN", std::max<int64_t>(4096, need));
}

std::vector<std::string> framework_argv(const benchmark_config& c, const launch_context& ctx, server_plan& plan, bool profile) {
  std::string port = std::to_string(ctx.port), tp = std::to_string(c.tp()), len = std::to_string(max_model_len(c));
  std::vector<std::string> a;
  const std::string mem = gpu_memory_utilization(c);  // GPU_MEMORY_UTILIZATION or GPU_MEM_UTIL
  if (c.framework == serving_framework::vllm) {
    const std::string extra = c.env("EXTRA_VLLM_ARGS");
    a = {"vllm", "serve", c.model, "--host", "127.0.0.1", "--port", port, "--tensor-parallel-size", tp};
    if (!extra_sets(extra, {"--gpu-memory-utilization"})) a.insert(a.end(), {"--gpu-memory-utilization", mem.empty() ? "0.9" : mem});
    if (!extra_sets(extra, {"--max-model-len"})) a.insert(a.end(), {"--max-model-len", len});
    a.push_back("--trust-remote-code");
    if (!c.model_revision.empty()) a.insert(a.end(), {"--revision", c.model_revision});
    if (profile && plan.profiler_args == profiler_delivery::flags)
      a.insert(a.end(), {"--profiler-config.profiler", "torch", "--profiler-config.torch_profiler_dir", plan.server_trace_dir,
                         "--profiler-config.torch_profiler_record_shapes", "True",
                         "--profiler-config.torch_profiler_with_memory", "True",
                         "--profiler-config.torch_profiler_with_flops", "True",
                         "--profiler-config.torch_profiler_use_gzip", "True"});
    append_split(a, c.env("EXTRA_VLLM_ARGS"));
  } else if (c.framework == serving_framework::sglang) {
    const std::string extra = c.env("EXTRA_SGLANG_ARGS");
    a = {"python3", "-m", "sglang.launch_server", "--model-path", c.model, "--host", "127.0.0.1", "--port", port,
         "--tp-size", tp, "--trust-remote-code"};
    // SGLang takes the model's own context length unless MAX_MODEL_LEN says otherwise.
    if (!c.env("MAX_MODEL_LEN").empty() && !extra_sets(extra, {"--context-length"}))
      a.insert(a.end(), {"--context-length", c.env("MAX_MODEL_LEN")});
    if (!mem.empty() && !extra_sets(extra, {"--mem-fraction-static"})) a.insert(a.end(), {"--mem-fraction-static", mem});
    if (!c.model_revision.empty()) a.insert(a.end(), {"--revision", c.model_revision});
    append_split(a, c.env("EXTRA_SGLANG_ARGS"));
  } else {
    a = {"python3", "-m", "atom.entrypoints.openai_server", "--model", c.model, "--host", "127.0.0.1",
         "--server-port", port, "-tp", tp};
    if (!mem.empty() && !extra_sets(c.env("EXTRA_ATOM_ARGS"), {"--gpu-memory-utilization"}))
      a.insert(a.end(), {"--gpu-memory-utilization", mem});
    if (profile) a.insert(a.end(), {"--torch-profiler-dir", plan.server_trace_dir});
    append_split(a, c.env("EXTRA_ATOM_ARGS"));
  }
  if (c.framework != serving_framework::atom) {
    auto d = dtype_args(c.precision);
    a.insert(a.end(), d.begin(), d.end());
  }
  return a;
}

env_list server_env(const benchmark_config& c, const launch_context& ctx, const server_plan& plan, bool profile) {
  env_list env = c.envs;
  for (const auto& kv : ctx.gpu_env) env.push_back(kv);
  env.emplace_back("MODEL", c.model);
  env.emplace_back("PRECISION", c.precision);
  if (profile) {
    env.emplace_back("PROFILE", "1");
    env.emplace_back("VLLM_TORCH_PROFILER_DIR", plan.server_trace_dir);
    env.emplace_back("VLLM_TORCH_PROFILER_RECORD_SHAPES", "1");
    env.emplace_back("SGLANG_TORCH_PROFILER_DIR", plan.server_trace_dir);
    env.emplace_back("ATOM_TORCH_PROFILER_DIR", plan.server_trace_dir);
  }
  return env;
}

std::vector<std::string> docker_argv(const benchmark_config& c, const launch_context& ctx, const server_plan& plan) {
  // server_lifecycle: a detached container that outlives the run (removed by a cleanup run).
  std::vector<std::string> a = {"docker", "run", c.lifecycle.enabled ? "-d" : "--rm", "--name", plan.container_name,
                                "--ipc=host", "--shm-size=16g", "--network=host"};
  std::string vendor = ctx.vendor;
  if (vendor.empty() && starts_with(c.gpu_arch, "gfx")) vendor = "AMD";
  if (vendor.empty() && starts_with(c.gpu_arch, "sm_")) vendor = "NVIDIA";
  if (vendor == "AMD")
    a.insert(a.end(), {"--privileged", "--cap-add=CAP_SYS_ADMIN", "--device=/dev/kfd", "--device=/dev/dri",
                       "--device=/dev/mem", "--cap-add=SYS_PTRACE", "--security-opt", "seccomp=unconfined",
                       "--group-add", "video"});
  else if (vendor == "NVIDIA")
    a.insert(a.end(), {"--gpus", "all"});
  a.insert(a.end(), {"-v", expand_home(c.hf_cache_path) + ":/root/.cache/huggingface", "-v", ctx.workspace.string() + ":/workspace"});
  if (!c.model.empty() && c.model[0] == '/' && fs::exists(c.model)) a.insert(a.end(), {"-v", c.model + ":" + c.model});
  for (const auto& [k, v] : plan.env) a.insert(a.end(), {"-e", k + "=" + v});
  for (const char* pass : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"})
    if (std::getenv(pass)) a.insert(a.end(), {"-e", pass});  // by name: the value stays out of argv
  a.insert(a.end(), {"--entrypoint", plan.server_argv[0], plan.image});
  a.insert(a.end(), plan.server_argv.begin() + 1, plan.server_argv.end());
  return a;
}

/// Wraps the local server in `nsys profile` when the system profiler is requested and possible
/// (NVIDIA, local run, nsys on PATH); otherwise records why it is skipped.
void apply_system_profiler(const benchmark_config& c, const launch_context& ctx, server_plan& plan) {
  if (!c.profiler.system_profiler) return;
  std::string why;
  if (c.run_mode != server_run_mode::local) why = "the server runs in a container (run_mode docker); nsys is only wrapped around a local server";
  else if (ctx.vendor == "AMD" || starts_with(c.gpu_arch, "gfx"))
    why = "Nsight Systems is NVIDIA-only and magpie has no AMD system profiler";
  std::string path_env;
  for (const auto& [k, v] : c.envs)
    if (k == "PATH") path_env = v;
  std::string nsys = why.empty() ? find_executable("nsys", path_env) : "";
  if (why.empty() && nsys.empty()) why = "nsys (Nsight Systems) was not found on PATH";
  if (!why.empty()) {
    plan.system_profiler = {{"skipped", "system profiler skipped: " + why}};
    return;
  }
  fs::path report = ctx.workspace / "system_profile" / "server";
  std::vector<std::string> argv = {nsys, "profile", "-o", report.string(), "--force-overwrite", "true"};
  argv.insert(argv.end(), c.profiler.system_profile_args.begin(), c.profiler.system_profile_args.end());
  argv.insert(argv.end(), plan.server_argv.begin(), plan.server_argv.end());
  plan.argv = argv;
  plan.stop_grace_s = std::max(plan.stop_grace_s, 180.0);  // nsys writes its report after SIGTERM
  plan.system_profiler = {{"tool", "nsys"}, {"report", report.string() + ".nsys-rep"}, {"command", argv}};
}

}  // namespace

status_or<server_plan> plan_server(const benchmark_config& c, const launch_context& ctx) {
  server_plan plan;
  bool docker = c.run_mode == server_run_mode::docker;
  bool profile = c.profiler.torch_profiler;
  plan.host_trace_dir = ctx.workspace / "torch_trace";
  plan.server_trace_dir = docker ? "/workspace/torch_trace" : plan.host_trace_dir.string();
  plan.url.host = "127.0.0.1";
  plan.url.port = static_cast<uint16_t>(ctx.port);
  plan.stop_grace_s = c.server.stop_grace_s;
  if (docker) {
    // server_lifecycle: one stable name per framework and port, so later runs find the container.
    plan.container_name = c.lifecycle.enabled ? "magpie-server-" + c.framework_name() + "-" + std::to_string(ctx.port)
                                              : "magpie-benchmark-" + ctx.task_id;
    if (!c.docker_image.empty()) {
      plan.image = c.docker_image;
    } else {
      if (!c.framework) return invalid_argument("no default image without a framework");
      MAGPIE_ASSIGN_OR_RETURN(plan.image, default_image(*c.framework, ctx.vendor, c.gpu_arch));
    }
  }
  std::string version = ctx.vllm_version.empty() && docker ? parse_version(plan.image) : ctx.vllm_version;
  if (!profile) plan.profiler_args = profiler_delivery::none;
  else if (c.framework != serving_framework::vllm || !c.server.command.empty()) plan.profiler_args = profiler_delivery::env;
  else if (c.profiler.vllm_profiler_args != profiler_delivery::automatic) plan.profiler_args = c.profiler.vllm_profiler_args;
  else plan.profiler_args = !version.empty() && version_at_least(version, "0.15") ? profiler_delivery::flags : profiler_delivery::env;
  if (!c.server.command.empty()) plan.server_argv = c.server.command;
  else plan.server_argv = framework_argv(c, ctx, plan, profile);
  plan.server_argv.insert(plan.server_argv.end(), c.server.extra_args.begin(), c.server.extra_args.end());
  plan.env = server_env(c, ctx, plan, profile);
  plan.argv = docker ? docker_argv(c, ctx, plan) : plan.server_argv;
  apply_system_profiler(c, ctx, plan);
  return plan;
}

json server_plan_json(const server_plan& p) {
  json j;
  j["server_command"] = p.server_argv;
  std::vector<std::string> shown = p.argv;
  for (size_t i = 0; i + 1 < shown.size(); ++i)
    if (shown[i] == "-e") {
      auto eq = shown[i + 1].find('=');
      if (eq != std::string::npos && is_secret_env(shown[i + 1].substr(0, eq))) shown[i + 1] = shown[i + 1].substr(0, eq) + "=<redacted>";
    }
  j["launch_command"] = shown;
  json e = json::object();
  for (const auto& [k, v] : p.env) e[k] = is_secret_env(k) ? "<redacted>" : v;
  j["env"] = e;
  j["container_name"] = p.container_name.empty() ? json(nullptr) : json(p.container_name);
  j["image"] = p.image.empty() ? json(nullptr) : json(p.image);
  j["server_trace_dir"] = p.server_trace_dir;
  j["profiler_args"] = p.profiler_args;
  j["url"] = p.url.to_string();
  j["system_profiler"] = p.system_profiler;
  return j;
}

status_or<int> free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return io_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  if (port <= 0) return io_error("cannot find a free port");
  return port;
}

}  // namespace magpie::serve
