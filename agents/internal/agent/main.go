package agent

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Main is every agent's main: it registers the common flags and the agent's
// own (flags), parses them, sets up logging and runs the agent until a
// signal, exiting with "name: error" when it fails.
func Main(name string, flags func(*flag.FlagSet), run func(ctx context.Context, o Options, log logr.Logger) error) {
	var o Options
	o.Bind(flag.CommandLine)
	if flags != nil {
		flags(flag.CommandLine)
	}
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	err := o.Validate()
	if err == nil {
		ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
		err = run(ctrl.SetupSignalHandler(), o, ctrl.Log.WithName(name).WithValues("node", o.Node))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Scheme holds client-go's types and the agent's.
func Scheme(adds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, adds...) {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Serve adds the liveness ping and the agent's readiness check to mgr and
// runs it until ctx ends.
func Serve(ctx context.Context, mgr manager.Manager, ready healthz.Checker) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if ready != nil {
		if err := mgr.AddReadyzCheck("agent", ready); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
