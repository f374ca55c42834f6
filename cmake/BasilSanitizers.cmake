# With BASIL_SANITIZE=ON every target is built with ASan and UBSan, and any
# UBSan finding aborts (so a test that triggers one fails).
if(BASIL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
