#include "streamhaz/report/report_input.h"

namespace streamhaz::report {

const char* kind_id(analysis::FindingKind kind) {
  switch (kind) {
    case analysis::FindingKind::Race: return "race";
    case analysis::FindingKind::OverSync: return "oversync";
    case analysis::FindingKind::PossibleRace: return "possible-race";
  }
  return "unknown";
}

}  // namespace streamhaz::report
