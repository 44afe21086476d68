package function

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"
)

// sizeWarnAt is the share of the receive limit from which a request is
// warned about.
const sizeWarnAt = 0.75

// sizeGuard says, on the composite, when a request nears the function's
// gRPC receive limit and what makes it large. Past the limit gRPC refuses
// the request before the function sees it, and as every composite of a kind
// reads much the same landscape, all of them fail at once: the warning
// comes while there is still time to raise --max-recv-message-size.
type sizeGuard struct {
	fnv1.FunctionRunnerServiceServer

	limit int // bytes
	log   logging.Logger
}

// RunFunction runs the function and adds the warning to its response.
func (g sizeGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil || rsp == nil {
		return rsp, err
	}
	if msg := sizeWarning(req, g.limit); msg != "" {
		g.log.Info(msg)
		response.Warning(rsp, fmt.Errorf("%s", msg)).TargetComposite()
	}
	return rsp, nil
}

// sizeWarning is the warning for a request at or above sizeWarnAt of
// limit, naming its largest parts; empty below.
func sizeWarning(req *fnv1.RunFunctionRequest, limit int) string {
	size := proto.Size(req)
	if limit <= 0 || float64(size) < sizeWarnAt*float64(limit) {
		return ""
	}
	type part struct {
		what  string
		bytes int
	}
	var parts []part
	for key, rs := range req.GetRequiredResources() {
		parts = append(parts, part{fmt.Sprintf("required resources %q (%d objects)", key, len(rs.GetItems())), proto.Size(rs)})
	}
	for key, rs := range req.GetExtraResources() { //nolint:staticcheck // Crossplane 1.x sends these.
		parts = append(parts, part{fmt.Sprintf("extra resources %q (%d objects)", key, len(rs.GetItems())), proto.Size(rs)})
	}
	if o := req.GetObserved(); o != nil {
		parts = append(parts, part{fmt.Sprintf("observed composed resources (%d)", len(o.GetResources())), proto.Size(o)})
	}
	slices.SortFunc(parts, func(a, b part) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.what, b.what)) })
	var largest []string
	for _, p := range parts[:min(3, len(parts))] {
		largest = append(largest, fmt.Sprintf("%s %s", p.what, mib(p.bytes)))
	}
	return fmt.Sprintf("this request is %s, %d%% of the function's receive limit of %s (--max-recv-message-size); past it every composite that reads as much fails. Largest parts: %s",
		mib(size), size*100/limit, mib(limit), strings.Join(largest, ", "))
}

func mib(b int) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
