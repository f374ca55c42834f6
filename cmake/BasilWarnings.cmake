# basil_warnings(target): the project's warning set; errors with
# BASIL_WERROR=ON (scripts/setup.sh turns it on, so CI fails on a warning;
# off by default, so that a newer compiler's new warning does not stop a
# site's build).
function(basil_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic
    -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
    -Wconversion -Wsign-conversion -Wnull-dereference -Wformat=2
    -Wimplicit-fallthrough)
  if(BASIL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
