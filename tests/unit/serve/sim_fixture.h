// Starts tests/sim/magpie_sim_server on a free loopback port and reads its ground truth.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "serve/http_client.h"

namespace magpie::serve::testing {

struct truth {
  std::string id;
  int status = 0;
  int64_t received_ns = 0, role_ns = 0, end_ns = 0, prompt_tokens = 0, generated = 0;
  bool aborted = false;
  std::vector<std::pair<int64_t, int>> events;
};

class sim_server {
 public:
  /// Starts the simulator with extra flags; fails the test when it does not come up in 5 s.
  explicit sim_server(const std::vector<std::string>& flags) {
    auto d = make_temp_dir(fs::temp_directory_path(), "magpie_sim_");
    EXPECT_TRUE(d.ok());
    m_dir = *d;
    spawn_spec s;
    s.argv = {MAGPIE_SIM_SERVER, "--port-file", (m_dir / "port").string(), "--record", (m_dir / "truth.jsonl").string()};
    s.argv.insert(s.argv.end(), flags.begin(), flags.end());
    auto c = child_process::spawn(s);
    EXPECT_TRUE(c.ok()) << c.get_status().message();
    m_child = std::move(*c);
    for (int i = 0; i < 500 && !fs::exists(m_dir / "port"); ++i) m_child->poll_output(0.01);
    auto text = read_file(m_dir / "port");
    EXPECT_TRUE(text.ok()) << "simulator did not start";
    if (text.ok()) m_url.port = static_cast<uint16_t>(parse_int(trim(*text)).value_or(0));
  }
  ~sim_server() {
    if (m_child) m_child->kill_group();
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  const endpoint_url& url() const { return m_url; }
  child_process& child() { return *m_child; }
  /// Ground truth by request id.
  std::map<std::string, truth> read_truth() const {
    std::map<std::string, truth> out;
    auto text = read_file(m_dir / "truth.jsonl");
    if (!text.ok()) return out;
    for (const auto& line : split(*text, '\n')) {
      if (trim(line).empty()) continue;
      auto j = parse_json(line);
      if (!j.ok()) continue;
      truth t;
      t.id = json_string(*j, "id");
      t.status = static_cast<int>(json_number(*j, "status", 0));
      t.received_ns = (*j)["received_ns"].get<int64_t>();
      t.role_ns = (*j)["role_ns"].get<int64_t>();
      t.end_ns = (*j)["end_ns"].get<int64_t>();
      t.prompt_tokens = (*j)["prompt_tokens"].get<int64_t>();
      t.generated = (*j)["generated"].get<int64_t>();
      t.aborted = json_bool(*j, "aborted", false);
      for (const auto& e : (*j)["events"]) t.events.emplace_back(e[0].get<int64_t>(), e[1].get<int>());
      out[t.id] = t;
    }
    return out;
  }

 private:
  fs::path m_dir;
  std::unique_ptr<child_process> m_child;
  endpoint_url m_url;
};

}  // namespace magpie::serve::testing
