package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WithClient is mgr whose GetClient is c: register gives every controller
// the provider's client for Secrets (clients/secrets), through which the
// managed reconcilers also read and publish their connection Secrets
// (crossplane-runtime builds its connection publisher from the manager's
// client).
func WithClient(mgr ctrl.Manager, c client.Client) ctrl.Manager {
	return withClient{Manager: mgr, client: c}
}

type withClient struct {
	ctrl.Manager

	client client.Client
}

func (m withClient) GetClient() client.Client { return m.client }
