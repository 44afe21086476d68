// Package shard splits the provider's managed resources between replicas
// (#55 §4). Every resource a CobaltCore function composes for the provider
// carries Label, a bucket of its composite's name; a replica serving shard i
// of n watches, caches and reconciles only the resources of its buckets, so
// that each replica holds a part of the landscape in memory and in its
// queues, and each resource is reconciled by exactly one replica.
//
// The buckets are fixed (Buckets), not the shards: a landscape grows from
// one replica to two, four or more without relabelling anything, and all of
// a composite's resources (a cloud's project, user, grants, aggregates and
// its ProviderConfig) stay in one shard, so that references between them
// resolve in one replica's cache.
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Label is the bucket of a composed resource's composite, "0" to "15".
const Label = "cobaltcore.c5c3.io/shard"

// Groups is the suffix of the API groups whose resources carry Label: the
// provider's (its managed resources and ProviderConfigs).
const Groups = ".provider.c5c3.io"

// Buckets is how many buckets composites fall into: the most shards the
// provider can be split into.
const Buckets = 16

// Of is the bucket of the composite named name, as Label's value.
func Of(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return strconv.Itoa(int(h.Sum32() % Buckets))
}

// Selector selects the resources of shard i of n: the buckets b with
// b mod n = i. Shard 0 also selects resources without the label (made by
// hand, or composed before the label existed), so that the n shards
// together select every resource, each exactly once.
func Selector(i, n int) (labels.Selector, error) {
	if n < 1 || n > Buckets {
		return nil, fmt.Errorf("shards: %d is not between 1 and %d (the buckets of label %s)", n, Buckets, Label)
	}
	if i < 0 || i >= n {
		return nil, fmt.Errorf("shard %d does not exist: shards are numbered 0 to %d", i, n-1)
	}
	if n == 1 {
		return labels.Everything(), nil
	}
	var mine, others []string
	for b := range Buckets {
		if b%n == i {
			mine = append(mine, strconv.Itoa(b))
		} else {
			others = append(others, strconv.Itoa(b))
		}
	}
	op, values := selection.In, mine
	if i == 0 {
		// notin matches an object without the label too.
		op, values = selection.NotIn, others
	}
	r, err := labels.NewRequirement(Label, op, values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}
