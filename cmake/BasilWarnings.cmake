# basil_warnings(target): the project's warning set; warnings are errors.
function(basil_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Werror
    -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
    -Wconversion -Wsign-conversion -Wnull-dereference -Wformat=2
    -Wimplicit-fallthrough)
endfunction()
