// Writes the JSON and SARIF reports of the hand-made sample findings (and of a clean result)
// into a folder, so that ctest can validate them against their JSON schemas without traces.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "sample_findings.h"
#include "streamhaz/report/json_report.h"
#include "streamhaz/report/sarif_report.h"

int main(int argc, char** argv) {
  using namespace streamhaz::report;
  if (argc != 2) {
    std::cerr << "usage: write_sample_reports DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const ReportInput sample = testing::sample_input();
  ReportInput clean;
  clean.analysis.traces = {{.path = "clean/rank0.shz", .rank = 0, .records = 3, .operations = 1}};
  std::ofstream(dir / "findings.json") << json_report(sample).dump(2);
  std::ofstream(dir / "findings.sarif") << sarif_report(sample).dump(2);
  std::ofstream(dir / "clean.json") << json_report(clean).dump(2);
  std::ofstream(dir / "clean.sarif") << sarif_report(clean).dump(2);
  // An operation done by the host (a free) has no stream: JSON gives "stream": null.
  ReportInput host = testing::sample_input();
  host.analysis.findings[0].first.on_host = true;
  std::ofstream(dir / "host.json") << json_report(host).dump(2);
  std::ofstream(dir / "host.sarif") << sarif_report(host).dump(2);
  return 0;
}
