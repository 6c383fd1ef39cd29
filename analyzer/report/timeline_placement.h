// Where operations without a GPU time go on the timeline: between their timed neighbours in
// API order. Also finds the windows in which GPU times were collected.
#pragma once

#include "streamhaz/report/timeline.h"

namespace streamhaz::report {

// Gives every untimed op of `rank` a zero-length interval, counts them, and fills
// `timed_windows` when some ops are timed and some are not. A rank without any GPU time gets
// an API-order axis instead (1 µs per call) and `order_only`.
void place_untimed_ops(RankTimeline& rank);

}  // namespace streamhaz::report
