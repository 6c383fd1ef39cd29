#include "messages.h"

#include <iostream>

#include "commands.h"
#include "streamhaz/trace/printable.h"

namespace streamhaz::cli {

void say(std::string_view verb, std::string_view what) {
  std::cerr << "streamhaz " << verb << ": " << trace::printable(what) << "\n";
}

int usage_error(std::string_view verb, std::string_view what) {
  say(verb, what);
  return kExitUsage;
}

void warning(std::string_view verb, std::string_view what) {
  std::cerr << "streamhaz " << verb << ": warning: " << trace::printable(what) << "\n";
}

void warnings(std::string_view verb, const std::vector<std::string>& what) {
  for (const std::string& w : what) warning(verb, w);
}

bool stdout_written(std::string_view verb) {
  std::cout.flush();
  if (std::cout) return true;
  usage_error(verb, "cannot write to standard output");
  return false;
}

}  // namespace streamhaz::cli
