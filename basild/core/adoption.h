// Adoption: finding in an INVENTORY the ALPS reservation an earlier RESERVE
// made for a batch id, when its answer was lost, so that basild adopts it
// instead of reserving twice. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "basil_proto/model.h"

namespace basild {

struct AdoptionMatch {
  std::uint64_t reservation_id = 0;
  std::vector<std::uint32_t> nodes;  // NIDs holding an allocation of it, ascending
                                     // (empty when the inventory carried no nodes)
};

// The reservation of `inventory` that `request` would have made, or nullopt.
// It fits when all of these hold:
//  - request.batch_id is set, is not "UNKNOWN", and equals the reservation's;
//  - the user names are equal (and the account names, when the request has one);
//  - its BASIL placeholder application (time_stamp 0, cmd "BASIL") has one
//    Command per ReserveParam, in order, with equal width, depth (default 1),
//    nppn (when the request gives one) and memory per PE (when the request
//    gives an OS MemoryParam);
//  - the reservation mode is equal when both say one;
//  - when the inventory carries nodes: at least one node holds it, every
//    such node is in the request's NodeParam lists (when the request has
//    any), and, when every ReserveParam gives nppn, it holds exactly
//    sum(ceil(width / nppn)) nodes.
// Several fitting reservations (a twice-made RESERVE): the lowest id.
std::optional<AdoptionMatch> find_adoptable_reservation(const basil::Inventory& inventory,
                                                        const basil::ReserveRequest& request);

}  // namespace basild
